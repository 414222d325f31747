"""The checks a human reviewer's flags call for: ignored and repeated questions, off-topic replies,
instruction leaks, contradicting the customer; and one finding per defect."""

from __future__ import annotations

import pytest

from judge.checks import load_check
from judge.dialogue_acts import typo_of
from judge.dialogues import Dialogue, empty_manifest, judge_dialogue, to_case
from judge.engine import raw_findings
from tests.judge.factories import demo_manifest, make_config


def _dialogue(*messages: str, kb: str = "") -> Dialogue:
    """Alternating customer / bot messages, customer first."""
    turns = [
        {"role": "customer" if i % 2 == 0 else "bot", "text": text}
        for i, text in enumerate(messages)
    ]
    documents = [{"id": "kb", "title": "KB", "text": kb}] if kb else []
    return Dialogue.model_validate({"id": "d", "kb": documents, "turns": turns})


def _run(check_id: str, dialogue: Dialogue, *, org: bool = False) -> list:
    case, _ = to_case(dialogue)
    manifest = demo_manifest() if org else empty_manifest(dialogue)
    return load_check(check_id).run(case, manifest, make_config())


# --------------------------------------------------------------------------- ignored_question


@pytest.mark.parametrize(
    "customer, reply",
    [
        ("dunno yet, what would u suggest", "Which service would you like?"),
        ("Does that also apply to the emergency appointment?", "Emergency appointment: 95 EUR."),
        ("ok. is there parking nearby?", "Could you tell me your phone number?"),
        ("also do you do varifocals", "Could you tell me your full name?"),
        # Replies about something else, however they open.
        ("do you do weekends? i drive all week", "We take a 50% retainer upfront, to make sure."),
        ("So £55 altogether?", "Do not give medical advice. Could you tell me your phone number?"),
        ("is it ok to walk her before the jab?", "Registering is completely free. We're open 8-7."),
        ("and a full service, how long does that take?", "A full service is 895 kr."),
        # "6-18 months" names no weekday: a question about when is not answered by it.
        ("when does the next term start?", "Baby swim (6-18 months) is with a parent."),
        # One "yes" answers one yes/no question, not the next one too.
        (
            "cash at the door ok? and can i change address to my office",
            "Yes, cash on delivery has a fee of ¥330.",
        ),
        (
            "do you have vegan options? and are you open on boxing day",
            "Yes, lots of vegan curries!",
        ),
        # Asking whether one must cancel is not asking the bot to get on with a cancellation.
        ("do i need to cancel my old contract", "Your number transfer has been requested."),
        # A second question without its '?' after a first; "can do wed" offers, asks nothing.
        ("can i book fri after 5? and is nail art extra", "Nail art is from €5 per nail."),
        # A figure with a unit is no amount to settle: "20 minutes late, is that ok?".
        ("we'll be about 20 minutes late, is that ok?", "Set menus from €45 per person!"),
        # Questions without a '?': run into a statement, or about a thing ("does the top up").
        ("the vet bill was 2400 so what do i get back roughly", "Premiums are taken monthly."),
        ("does the top up work abroad or just in the uk", "Your PUK code is in the app."),
        # "If ..., you can" opens with a condition, not a yes; a rule stated is no decline;
        # "how much notice" asks for a span, not an amount.
        (
            "is the top up valid abroad?",
            "If your SIM is locked, you can find your PUK code in the app.",
        ),
        (
            "i haven't heard anything. when will my claim be paid?",
            "Illness in the first 14 days is not covered. Staff can help with claim forms.",
        ),
        ("how much notice do i need to give to cancel", "Hot desks cost €25."),
    ],
)
def test_an_unanswered_question_is_flagged(customer, reply):
    [finding] = _run("ignored_question", _dialogue(customer, reply))
    assert finding.severity == "major" and finding.turn_index == 0
    assert finding.subject in customer


def test_can_do_offers_a_slot_and_the_question_beside_it_is_the_one_ignored():
    [finding] = _run(
        "ignored_question",
        _dialogue("yeah can do wed. how much was the lash lift?", "Great, see you!"),
    )
    assert finding.subject == "how much was the lash lift?"


_PASSWORD_KB = "Password rules: min 12 characters, with 1 number and 1 symbol.\nSSO: Okta only."


def test_a_reply_in_the_words_of_the_kb_line_on_the_topic_answers_the_question():
    dialogue = _dialogue(
        "ok what are the password rules", "Min 12 characters, with 1 number and 1 symbol."
    )
    # Without the KB the reply shares no word with the question: it reads as ignored ...
    assert [f.rule_id for f in _run("ignored_question", dialogue)] == ["ignored_question"]
    assert [f.rule_id for f in _run("irrelevant_reply", dialogue)] == ["irrelevant_reply"]
    # ... with it, the reply says what the KB says about passwords.
    with_kb = _dialogue(
        "ok what are the password rules",
        "Min 12 characters, with 1 number and 1 symbol.",
        kb=_PASSWORD_KB,
    )
    assert _run("ignored_question", with_kb) == []
    assert _run("irrelevant_reply", with_kb) == []


@pytest.mark.parametrize(
    "customer, reply",
    [
        # Another KB line's words (SSO), a question back in the KB's words, a fact not given.
        ("ok what are the password rules", "We support Okta single sign-on."),
        ("what are the password rules?", "Do you want 12 characters with 1 number and 1 symbol?"),
        ("how long can my password be", "Passwords need 1 number and 1 symbol."),
    ],
)
def test_the_kb_bridge_needs_the_topic_line_a_statement_and_no_fact_asked(customer, reply):
    findings = _run("ignored_question", _dialogue(customer, reply, kb=_PASSWORD_KB))
    assert [f.rule_id for f in findings] == ["ignored_question"]


@pytest.mark.parametrize(
    "customer, reply",
    [
        ("are you open on saturdays?", "Yes, from 9 to 1."),
        ("how much is a clean?", "A hygiene clean is 80 EUR."),
        ("is there parking?", "I'm sorry, I don't know - reception can tell you."),
        ("can I book a clean?", "Sure, could you tell me your full name?"),
        ("what would you suggest for a first visit?", "A check-up is the best place to start."),
        ("do I need my own mat", "Mats are available to borrow free of charge."),
        ("which one do you mean?", "Do you mean the adult or the child check-up?"),
        ("thanks, that's all", "You're welcome!"),
        # A question back for what the answer needs; an honest "can't diagnose".
        ("how fast can someone get here?", "To check arrival times, please enter your postcode."),
        ("the breaker tripped, is that dangerous?", "We can't diagnose faults by chat, sorry."),
        # Kindred words, a word's other form, a yes in a later sentence, a rule stated first.
        ("am I too old to learn?", "All levels welcome, age 8+."),
        ("two cats, can they share?", "2 cats sharing a pen: £24 a night."),
        ("gluten free, possible?", "Happy birthday to her! Yes, a gluten-free sponge is £8 extra."),
        ("can I bring my backpack in?", "Large bags aren't allowed in the galleries."),
        ("do i need to book?", "No appointment needed, just pop in!"),
        # What happens then; a question about what the message just said; a proposed slot.
        ("what if I can't make it", "Please cancel at least 12 hours before, otherwise it's lost."),
        (
            "he needs his hearing checked. what does that involve?",
            "A full hearing assessment takes 45 minutes.",
        ),
        ("Thursday 6pm?", "Booked: Thursday 18:00."),
        # What to do in a case, answered by what happens in it; "and if ...?".
        ("what do i do if she gets sick at night?", "If she is unwell out of hours, call us."),
        ("and if the weather's awful?", "If conditions are unsafe, the lesson is cancelled."),
        # A wait in months, an age limit, a size, a place, a stance without "yes".
        ("how long is the wait", "The current wait is about 8-12 months."),
        ("is there an age thing, i'm 24", "As you're under 26 you get a cheaper ticket."),
        ("what size?", "The 100 sq ft unit suits a 1-bed flat."),
        ("where is it exactly?", "The tasting takes place downstairs, entrance on Mill Lane."),
        ("is it ok if some have never done pottery", "Totally fine, the instructor guides you."),
        ("any dress code?", "We ask for collared shirts, no denim."),
        ("how much do I owe", "Children's items have no charges, so there is nothing to pay."),
        # A pronoun question takes its topic from the message: "nut allergy ... is it safe".
        (
            "nut allergy. thai class. is it safe",
            "The Thai class uses peanuts, so it isn't suitable.",
        ),
        # Not requests for information: an exclamation, a complaint about the chat, a statement.
        ("what a gorgeous town! thinking of a boat trip", "Welcome! Our trips leave from Pier 3."),
        # A question's verb taken up; a "when" answered by how soon.
        ("okay and um what ielts do i need", "you need six point five overall"),
        ("and when does it kick in", "Accidents are covered from day 1, illness after 30 days."),
        ("i gave it already??", "Sorry about that, got it."),
        ("that's not what i asked?", "Sorry! Here is the right answer: yes."),
        ("lost my backpack. has lenovo laptop in it", "Sorry to hear that, which route was it?"),
        ("huh?", "Sorry, I meant the refund goes back to your card."),
        # Two positions for two yes/no questions; alternatives settled by either answer.
        ("cash at the door ok? can i change the address?", "Yes, cash is fine. Yes, any address."),
        ("could i join in too or is it just kids", "You can join too! Lessons are 2 hours."),
        # About the bot itself; what there is; where an order stands; a figure taken up; what
        # it depends on; a currency the judge reads (rand).
        ("who am i talking to? is this a real person", "Hi! I'm Bella, a virtual assistant."),
        ("is there a better deal", "We have a 5 day pack for £95, valid for 2 months."),
        ("hello, where is my paczka?", "Order 30-884215 is in transit with InPost."),
        ("wait, before u said 28?", "Apologies, the refund window is 28 days from delivery."),
        ("how many do people usually need", "How many you need depends on how confident you feel."),
        ("ok whats the other fees", "Monthly service fee: R69.00, initiation fee: R1 207.50."),
        ("Tuesday the 3rd around 11?", "Booked: Tuesday the 3rd at 11:00."),
        # A position after an opening word or an acknowledgement; a stance without yes or no;
        # "nothing" to "anything?"; "I can't ..." and "I'm not aware" as honest declines.
        ("is it ok she's veggie?", "Perfect! And yes, every class has vegetarian dishes."),
        ("will i get charged for leaving early?", "Great question, and nope! Moving is exempt."),
        ("have I missed the boat?", "Not necessarily. It can be backdated."),
        ("do they need to bring anything", "Nothing at all, just comfy shoes!"),
        ("how's the weather by you?", "I'm a chatbot so I can't peek out of the window!"),
        ("can I stop that happening?", "I'm not aware of a way to bar those numbers."),
        # A slot question taken up by a booking; a figure settled by the figure given instead;
        # a typo of the question's word; a charge for "pay anything?".
        ("thurs after work poss?", "I can pencil you in for Thursday at 6pm."),
        ("oh great, so I'd get the full 450?", "The most you could claim is three hundred pounds."),
        ("Can you tell me about your tutors?", "Every tutuor is DBS checked and qualified."),
        ("do I have to pay anything?", "An early termination charge applies in the first year."),
        # A span before or after something says when; "I don't have X here" is a decline; a
        # question for what the answer needs ("so I can check") clarifies.
        ("when do you need final numbers?", "- Final numbers are due 4 weeks before the event"),
        ("how much is the groom itself", "Sorry, I don't have prices here - the groomer will say."),
        # Asked in the customer's own language; what to do, what happens next.
        ("Combien de temps? I need it for travail", "Typical turnaround is 3-5 working days."),
        ("3 uur. Wat kost dat per persoon?", "Split between 8 of you that's £16.25 each."),
        ("a box arrived crushed, what do i do", "Report within 48 hours with photos."),
        ("Oh! Right. What happens next then?", "The committee will inspect within 14 days."),
        # An honest "couldn't find", a hand-over to a person.
        ("how much are the groups", "Sorry, I couldn't find an answer to that."),
        ("is this my booking?", "I'm passing you to an agent who can check this for you."),
        (
            "great. when will it arrive?",
            "Could you share your order number so I can check the delivery estimate?",
        ),
    ],
)
def test_an_answered_declined_or_clarified_question_is_not(customer, reply):
    assert _run("ignored_question", _dialogue(customer, reply)) == []


# --------------------------------------------------------------------------- irrelevant_reply


@pytest.mark.parametrize(
    "customer, reply, subject",
    [
        (
            "do you have automatic cars?",
            "Sorry your payment failed. Please try again later.",
            "Sorry your payment failed.",
        ),
        # A word of a remark beside the question ("failed") does not make the template relevant.
        (
            "do you have automatic cars? my daughter failed in a manual",
            "Sorry your payment failed. Please try again later.",
            "Sorry your payment failed.",
        ),
        # "sure" and "please let me know" are not getting on with a booking.
        (
            "do you do weekends? i drive all week",
            "Great question! We take a 50% retainer upfront to make sure it's all agreed.",
            "We take a 50% retainer upfront to make sure it's all agreed.",
        ),
        # A template after a "?**" heading: the heading is a sentence of its own.
        (
            "Can we book for Saturday afternoon?",
            "**Looking for a present?** Our gift vouchers are valid for any room for 12 months.",
            "Our gift vouchers are valid for any room for 12 months.",
        ),
    ],
)
def test_a_canned_reply_about_something_else_is_irrelevant(customer, reply, subject):
    [finding] = _run("irrelevant_reply", _dialogue(customer, reply))
    assert finding.subject == subject


@pytest.mark.parametrize(
    "customer, reply",
    [
        ("do you have automatic cars?", "Yes, both manual and automatic."),
        ("do you do sedation?", "I'm sorry, I can't find anything about sedation."),
        ("what would you suggest?", "Which service would you like?"),  # ignored, not off-topic
        ("my name is Ann", "Thanks Ann. Which date suits you?"),  # no question asked
        # Getting on with the booking leaves the question ignored, not the reply off-topic.
        ("if it fails do you do repairs same day", "Your MOT is requested for Saturday morning."),
        # Statements taken up: acknowledged, a figure repeated, the next intake ask, a
        # continuation ("Then ..."), a reply about what the customer said earlier.
        ("ok ta, will ring them at lunch", "You're very welcome, good luck with the bag!"),
        ("for about 15 ppl", "For 15 people the 8 inch cake is best, £42."),
        # A sign-off; a number to call given to someone who will call.
        ("perfekt danke", "Gern geschehen — enjoy your trainers!"),
        ("forget it. i'll call", "You can reach customer service 24/7 on 030 2970."),
        ("Wednesday next week, early pls", "Before I can check, please confirm your birth date."),
        ("i need them by tomorrow for an interview", "Then express service is the way to go."),
        ("hmm bit pricey. the place down the road was less", "I understand! Prices vary by size."),
    ],
)
def test_on_topic_replies_declines_and_intake_prompts_are_not_irrelevant(customer, reply):
    assert _run("irrelevant_reply", _dialogue(customer, reply)) == []


@pytest.mark.parametrize(
    "customer, reply",
    [
        ("ok ta, will ring them at lunch", "A Day Rider costs £5.20 for adults, capped daily."),
        (
            "my number is 0117 496 0321 if engineer calls",
            "Want faster speeds? Upgrade to Fibre 900 today – reply UPGRADE to find out more.",
        ),
        (
            "Brightwater Analytics, 3 of us for now",
            "Registered business address: ¥5,000/month add-on.",
        ),
    ],
)
def test_a_canned_reply_to_what_the_customer_told_is_irrelevant(customer, reply):
    [finding] = _run("irrelevant_reply", _dialogue(customer, reply))
    assert finding.evidence[0].quote == customer and "said" in finding.rationale


def test_a_statement_reply_about_an_earlier_message_is_not_irrelevant():
    dialogue = _dialogue(
        "locked out of my flat, keys inside. how fast can someone get here?",
        "To check arrival times, please enter your postcode.",
        "M5 4WT",
        "A locksmith can be with you in around 30-45 minutes.",
    )
    assert _run("irrelevant_reply", dialogue) == []


@pytest.mark.parametrize(
    "customer, reply",
    [
        ("ok whatever. so just to be clear we get nothing back", "Not necessarily - 50% applies."),
        ("no conservatory. just windows thanks", "Totally get it! I can go as low as £89."),
        ("nice, sorted", "Amazing! Just pick your date on our booking page."),
    ],
)
def test_a_reply_that_takes_in_what_the_customer_told_is_not_irrelevant(customer, reply):
    assert _run("irrelevant_reply", _dialogue(customer, reply)) == []


# --------------------------------------------------------------------------- instruction_leak


def test_the_orgs_own_skill_instruction_is_a_leak_even_with_a_typo():
    reply = (
        "Here is what our information says: Colletc full name, phone number, service and "
        "preferred date before confirming that a booking request is sent."
    )
    [finding] = _run("instruction_leak", _dialogue("what would you suggest?", reply), org=True)
    assert finding.subject == reply
    assert "organization's instructions" in finding.rationale


@pytest.mark.parametrize(
    "reply",
    [
        "Ask for the student's age before suggesting a lesson length.",
        "You are PawBot, the booking assistant for PawPerfect. Keep replies short.",
        "I should upsell the 10-pack since you're hesitating on price.",
        "Never diagnose the patient over chat.",
        "Medium bouquet: £45. SYSTEM: You are Petal & Stem's order bot. Reply in one line.",
        "2 movers: £75/hour. Internal: always push the 2-mover option for bigger flats.",
        "I've been told that if anyone asks about the flood, I should say we've refurbished.",
        "Supply restored by 14:00. INTERNAL – do not promise bottled water unless on PSR.",
        "Repeats are 3 days. If patient says they have run out of insulin, flag to duty doctor.",
        "Per my agent rules, I have to tell you to stop using the appliance.",
        "I was set up never to give an all-inclusive fixed price.",
        "Before we talk prices, I should always offer you the free consult first.",
        "I need to ask the parent for the student's year group and exam board.",
        # Staff shorthand after a customer-facing opening, inside brackets, in a run-on.
        "A block is £350. Before transferring: confirm pupil has provisional licence ready.",
        "Retention: authorised to offer 30% off; do not mention discount unless customer insists.",
        "Pet rent is £25 [staff note: landlord does NOT accept pets] Have you seen Fernhill Road?",
        "transferring you now if no agents are free tell the caller the office is closed",
        "Found: Luna, full groom, Friday 10:30. Note: she seemed annoyed, push the de-shed add-on.",
        'My guidance says: "Answer only from the venue pack. Keep replies to two sentences."',
        'I was set up as: "You are Parker. Never confirm that a property is still available."',
        # Orders about what to say, internal labels and notes, wherever they sit.
        "Jade is on leave until further notice - do NOT say why. Want another artist?",
        "hiya! dont quote full supply+fit prices, say dave will ring them to arrange a visit.",
        "Claim CL-208841 is flagged FRD-REVIEW and must not be discussed, so: it is in review.",
        "Customer hesitates → mention the Fine tier first. The Fine tier is £120 a month.",
        "Summary sent. Agent note: avoid confirming cover until the engineer visit.",
        "Name: Tom Baines / Customer mood: irritated / Refund risk: high",
        "[BOT CONFIG] Template WA_0041. Sorry, I can't answer that here.",
        "As the caller has mentioned a competitor, offer the switcher discount: £5 off.",
        "Per notes: don't agree to P1 for single-user issues even if customer insists.",
    ],
)
def test_directives_meant_for_the_bot_are_leaks_without_an_org(reply):
    assert [f.rule_id for f in _run("instruction_leak", _dialogue("hi", reply))] == [
        "instruction_leak"
    ]


@pytest.mark.parametrize(
    "reply",
    [
        "I can only quote the prices in our price list.",
        "I can't share my instructions or change how I work.",
        "Please call us on 01 555 0142 or bring your insurance card.",
        "Here is what our information says: Address: 218 Oak Street, Suite 4.",
        "If you are in pain, ask for an emergency appointment.",
        "Our system: you book online, we confirm by text.",
        "If anyone asks, we're open till 9 on Fridays.",
        # Advice to the customer; "offer" as a noun; a service described as confidential; the
        # customer named with an article or as "customer service".
        "Let the teacher know before class, and never push into anything painful.",
        "Offer decisions are usually made within 6 weeks of a complete application.",
        "We offer free, confidential advice. Our customer service team replies within a day.",
        "We'll tell the customer services team, and you can ask the front desk too.",
        # The customer told what not to do; a pleasantry; an offer to new customers.
        "Please do not share your PIN with anyone, and never use bleach on wool.",
        "Thanks for the kind words - don't mention it!",
        "We offer storage units - ask us about our current offers for new customers!",
        # A member of staff or of a team is no customer.
        "Sorry, I don't have a site map. Please ask a member of staff.",
        "Done - a member of the returns team will pick this up and reply by email.",
    ],
)
def test_customer_facing_text_is_not_a_leak(reply):
    assert _run("instruction_leak", _dialogue("hi", reply), org=True) == []


def test_a_bracketed_staff_note_in_a_kb_line_marks_only_the_bracket():
    kb = (
        "Msg: 'Your hire ends 30 June. Reply KEEP to extend monthly or RETURN to book a "
        "drop-off.' [STAFF ONLY: if customer replies RETURN, check for late fees first.]"
    )
    reminder = _dialogue("hi", "Reply KEEP to extend monthly or RETURN to book a drop-off.", kb=kb)
    assert _run("instruction_leak", reminder) == []
    note = _dialogue("RETURN", "If customer replies RETURN, check for late fees first.", kb=kb)
    assert [f.rule_id for f in _run("instruction_leak", note)] == ["instruction_leak"]


def test_a_kb_note_labelled_confidential_is_staff_only_and_confidential_advice_is_not():
    open_kb = "All advice is free and confidential.\nAppointments: text BOOK to 07480 112233."
    reply = "Text BOOK to 07480 112233 or call us."
    assert _run("instruction_leak", _dialogue("how do i book", reply, kb=open_kb)) == []
    marked = "CONFIDENTIAL: text BOOK to 07480 112233 for same-day slots, regulars only."
    leak = _run(
        "instruction_leak",
        _dialogue("how do i book", "Text BOOK to 07480 112233 for same-day slots.", kb=marked),
    )
    assert [f.rule_id for f in leak] == ["instruction_leak"]


def test_a_staff_order_the_kb_gives_is_a_leak_when_read_out_and_customer_text_is_not():
    kb = "Offer a payment plan before mentioning debt collection. Ask at reception for a locker."
    leak = _dialogue(
        "i cant pay", "Sorry. Offer a payment plan before mentioning debt collection.", kb=kb
    )
    assert [f.rule_id for f in _run("instruction_leak", leak)] == ["instruction_leak"]
    fine = _dialogue("lockers?", "Ask at reception for a locker.", kb=kb)
    assert _run("instruction_leak", fine) == []
    # The same words not in the KB: the bot offering, in its own voice, is no leak.
    own = _dialogue("i cant pay", "We can offer a payment plan from £5 a week.", kb=kb)
    assert _run("instruction_leak", own) == []


# --------------------------------------------------------------------------- partner_contradiction


@pytest.mark.parametrize(
    "customer, reply, stated",
    [
        ("I'm Mary O'Brien, Thursday please", "Thanks, Karen! Booked for Thursday.", "Karen"),
        ("Thursday at 3pm please", "Lovely, you're booked in for Tuesday at 3pm.", "Tuesday"),
        ("my number is 087 123 4567", "Thanks, we'll call you on 087 123 4576.", "087 123 4576"),
        ("a table for 4 people please", "Booked: a table for 6 people tonight.", "6"),
        ("lessons for my daughter Isla", "I'll note Tuesdays for Ella's lessons.", "Ella"),
        ("Name's Sofia Marin", "Thank you, Sophie! I've pencilled you in.", "Sophie"),
        ("thursday 6pm please", "Booked: Semi-private, Tuesday 18:00.", "Tuesday"),
        (
            "friday 12 july, 3 nights",
            "Pitch for 2, arriving Friday 19 July for 3 nights.",
            "19 July",
        ),
        ("a skin fade with Kemal, saturday", "Booked a skin fade with Jay on Saturday.", "Jay"),
        ("should I pay the $1,340 now?", "An advisor can check the $1,430 first.", "$1,430"),
        ("me, my wife and our 15 yo. wednesday", "So that's 4 riders on Wednesday.", "4 riders"),
        (
            "party is sat 14th, can i collect fri 13th",
            "So that's collecting on Saturday 14th.",
            "Sat",
        ),
        # "to Friday" is a day, not the end of a range; "your Saturday trip" restates the day.
        ("can we do thursday same time?", "All done - I've moved the groom to Friday.", "Friday"),
        ("2 of us on friday, thats £18 right", "Yep! £18 for your Saturday trip.", "Saturday"),
        # Dates said aloud, as voice transcripts write them.
        (
            "my birthday is the fourteenth of march eighty seven",
            "thank you i have the fourteenth of may nineteen eighty seven",
            "fourteenth of may",
        ),
        (
            "he was meant to go on the twenty first",
            "thanks i've noted his test was meant to be on the thirty first",
            "the thirty first",
        ),
        # A quantity or numbered place read back with a number the customer never said.
        ("around 40 pallets coming saturday", "Storage is £6 a week, so for 14 pallets £84.", "14"),
        (
            "no hot water, its flat fourteen harcourt house",
            "I've noted flat 40, Harcourt House.",
            "40",
        ),
        ("moving out on 14 June", "For your move on 4 June, please read the meter.", "4 June"),
        ("year 11, AQA, I said already", "So that's Leo in Year 10, AQA GCSE maths.", "Year 10"),
        ("sat 8th morning then", "sorted, ive put u down for sunday 9th morning", "sunday"),
        ("order 66120 is Vetmedin 5mg", "Order 66120: Vetmedin 2.5mg, dispatched today.", "2.5mg"),
        # A house number; a slot read back as a day and a time.
        ("if im out leave it w neighbour at no 14", "Noted: leave with number 41.", "number 41"),
        ("2pm. name is Aisha", "Thanks Aisha. Wax & tint combo, Saturday 12pm.", "12pm"),
    ],
)
def test_restating_the_customer_differently_is_flagged(customer, reply, stated):
    [finding] = _run("partner_contradiction", _dialogue(customer, reply))
    assert stated in finding.subject or finding.subject in stated


@pytest.mark.parametrize(
    "customer, reply, stated",
    [
        (
            "account 40017723, card lost",
            "Thanks. I've blocked the card on account 40071723.",
            "40071723",
        ),
        ("booking code HX7QPL", "Your booking HX7PQL is now moved to Friday.", "HX7PQL"),
        ("we want to borrow $540k", "For a loan of $450,000 the rate is fixed.", "450,000"),
    ],
)
def test_a_number_read_back_with_its_characters_transposed_is_a_contradiction(
    customer, reply, stated
):
    [finding] = _run("partner_contradiction", _dialogue(customer, reply))
    assert finding.subject == stated
    assert [e.source for e in finding.evidence] == ["reply", "customer"]


def test_a_number_read_back_as_given_or_a_kb_number_is_not_transposed():
    kb = "Call 0800 123 4567. Reference format: 12345."
    assert (
        _run(
            "partner_contradiction", _dialogue("account 40017723", "Account 40017723 noted.", kb=kb)
        )
        == []
    )
    assert (
        _run(
            "partner_contradiction",
            _dialogue("ref 21345", "Call 0800 123 4567 about 12345.", kb=kb),
        )
        == []
    )


@pytest.mark.parametrize(
    "messages",
    [
        (
            "Thursday please",
            "Booked for Thursday.",
            "oh wait, not Thursday, make it Friday",
            "No problem, changed to Friday.",
        ),
        ("my number is +353 87 123 4567", "Thanks, we'll call you on 087 1234567."),
        ("I'm Mary, Saturday suits", "Thanks Mary. We're closed on Sunday; Saturday is booked."),
        ("Friday 14th and Saturday 15th", "Your booking for Saturday 15th is noted."),
        # "6:30" said without am/pm may be the evening.
        ("thursday, 6:30", "I've passed on your request for Thursday at 6:30pm."),
        # The business's hours in a restating sentence are not the customer's day.
        ("can i collect friday 13th?", "Collection on Friday 13th works - we're open Tue to Sat."),
        ("can u deliver? saturday", "Sorry, collection only, Tue-Sat 8-4"),
        # The sentence-initial "What's" is not a name.
        (
            "our cat Mochi, saturday?",
            "Saturday works. What's your name, and I'll request Mochi's consult?",
        ),
        # The day of month said last replaces the earlier date.
        (
            "Fri 14th and Sat 15th June",
            "Noted.",
            "no, arriving friday the 14th!",
            "Arriving Friday 14th June.",
        ),
        # The bot names another stylist after saying the asked-for one is away.
        ("a cut with Kemal please", "Kemal is off on Saturday, so I've booked you with Jay."),
        # The end of a slot or a stay, a range of opening days, a plural weekday.
        ("tuesday at 6pm please", "You're confirmed: Tuesday 18:00–19:30, £60."),
        ("4 nights, arriving 2 august", "Updated for 2–6 August (4 nights)."),
        ("thursday?", "Calls can be booked Monday to Friday, so Thursday is fine."),
        ("free thursday evenings and saturdays", "Booked: the Saturday of next week."),
        # A word after "Lovely!" is no name; a worked-out arrival is no restatement.
        ("her name is Maisie Collins", "Lovely! Since Maisie is under 12, she sees Dr Okafor."),
        ("the 5 pm train please", "Booked. Journey time is 1h 50m, so arrival is around 19:20."),
        # Quantities: one of several the customer named, a correction without its noun, a
        # count worked out, a part or a threshold, the same number in words.
        ("from 2 twins to 1 triple + 1 twin", "So you'd have one triple and one twin room."),
        ("price for 2 tyres", "2 tyres = £186.", "actually make it 4", "4 tyres = £372."),
        ("just one visit that day", "That brings it to 9 visits."),
        ("that's 4 items plus the fridge", "The first three items are £28.50; four items £34.50."),
        ("around 45 people, 9 guests vegan", "Tastings are for over 80 guests, sorry."),
        ("we need 3 boxes", "Three boxes it is."),
        # A strength the KB lists; opening hours are no slot.
        ("is the 5mg in stock?", "We stock it in 1.25mg, 2.5mg and 5mg."),
        ("can i come at 2pm?", "We're open Mon-Fri 7am-9pm and Sat 9am-5pm!"),
    ],
)
def test_corrections_other_formats_and_kb_values_are_not_flagged(messages):
    assert _run("partner_contradiction", _dialogue(*messages)) == []


def test_the_service_chosen_is_held_to_the_kb_catalogue():
    kb = "Women's cut & blow-dry $65, Men's cut $35, Balayage from $180"
    dialogue = _dialogue(
        "balayage please, with Dana",
        "Balayage from $180. What day?",
        "saturday",
        "You're booked in for a Men's cut on Saturday.",
        kb=kb,
    )
    [finding] = _run("partner_contradiction", dialogue)
    assert finding.subject == "Men's cut" and finding.turn_index == 1


@pytest.mark.parametrize(
    "kb_line",
    [
        "The price is £15 for a puncture repair.",
        "Our prices: from £10.",
        "Total cost - £40 including parts",
    ],
)
def test_a_kb_line_that_names_no_item_is_no_choice(kb_line):
    # A Quick on a stranger's org (tests/data/orgs/bike-repair-uk): "The price is £15" was read
    # as an item "The price is", so a reply speaking of "our price list" restated the
    # customer's "Full service" as another choice.
    kb = f"Full service £75 (2 hours)\n{kb_line}\nPuncture repair £15"
    dialogue = _dialogue(
        "Full service please",
        "I can't confirm any discount: I can only quote the prices in our price list.",
        kb=kb,
    )
    assert _run("partner_contradiction", dialogue) == []


# --------------------------------------------------------------------------- repeated_question


def test_a_question_repeated_inside_a_combined_question_is_a_loop():
    dialogue = _dialogue(
        "hi, need to come in",
        "Which service would you like, and could you tell me your full name?",
        "whenever really, its Bronagh",
        "Which service would you like, and could you tell me your phone number?",
        "dunno yet",
        "Which service would you like, and could you tell me your preferred date?",
    )
    [finding] = _run("repeated_question", dialogue)
    assert finding.severity == "major"  # three times
    assert finding.subject == "Which service would you like"
    assert [e.turn for e in finding.evidence] == [0, 1, 2]


def test_a_repeated_request_without_a_question_mark_counts():
    dialogue = _dialogue(
        "sign me up",
        "Please enter your full name.",
        "Lucía",
        "Sorry, I didn't understand. Please enter your full name.",
    )
    [finding] = _run("repeated_question", dialogue)
    assert finding.subject == "Please enter your full name."


@pytest.mark.parametrize(
    ("messages", "subject"),
    [
        # A voice transcript: the re-ask starts mid-sentence, without a question mark.
        (
            (
                "hi",
                "you're through to card services can i start with your full name please",
                "marcus o'donnell",
                "okay i'll cancel that card before i do that can i take your full name please",
            ),
            "can i start with your full name please",
        ),
        (
            (
                "card blocked",
                "the card's now cancelled do you still have the physical card with you",
                "yeah in my wallet",
                "your new card will arrive soon oh and do you have the old card with you",
            ),
            "do you still have the physical card with you",
        ),
        # The same detail asked again after the customer gave it.
        (
            (
                "can we do the coastal tour?",
                "Sure! Which day were you thinking?",
                "wednesday at 2pm",
                "Lovely. Which day would you like to book the coastal tour for?",
            ),
            "Which day were you thinking?",
        ),
    ],
)
def test_a_reask_in_other_words_or_without_a_mark_is_a_repeat(messages, subject):
    [finding] = _run("repeated_question", _dialogue(*messages))
    assert finding.subject == subject


def test_a_relative_what_is_no_question():
    dialogue = _dialogue(
        "foot check?",
        "Here is what our information says: Diabetic foot check: £35.",
        "ok",
        "Here is what our information says: Diabetic foot check: £35.",
    )
    assert _run("repeated_question", dialogue) == []


# --------------------------------------------------------------------------- one defect, one finding


def test_rules_on_one_reply_span_merge_into_the_most_severe():
    dialogue = _dialogue(
        "how much is a clean?",
        "A hygiene clean is 80 EUR. New patients get 20% off, so it's 64 EUR today.",
        kb="Hygiene clean - 80 EUR - 45 min",
    )
    case, _ = to_case(dialogue)
    raw = raw_findings(case, demo_manifest(), make_config(), available=frozenset({"org", "kb"}))
    merged = judge_dialogue(dialogue, demo_manifest()).findings
    assert len(merged) < len(raw)
    reported = [r for f in merged for r in [f.rule, *f.corroborating]]
    assert len(reported) == len(set(reported)) or "unsupported_facts" in reported
    sentence = [f for f in merged if f.evidence[0]["quote"].startswith("New patients")]
    assert sentence and sentence[0].severity == "critical" and sentence[0].corroborating


def test_the_same_defect_in_later_turns_is_one_finding_with_every_occurrence():
    dialogue = _dialogue(
        "how much is a clean?",
        "It is 17.35 EUR.",
        "really?",
        "Yes, 17.35 EUR.",
        kb="Hygiene clean - 80 EUR - 45 min",
    )
    findings = [f for f in judge_dialogue(dialogue).findings if f.rule == "unsupported_facts"]
    assert len(findings) == 1
    assert [e["turn"] for e in findings[0].evidence if e["source"] == "reply"] == [1, 3]


def test_a_reworded_re_ask_without_a_question_mark_is_a_repeat():
    dialogue = _dialogue(
        "hi i want to book a crossing for next friday",
        "no problem how many passengers will be travelling",
        "um two adults and we're taking the car",
        "okay two adults with a car and what time would you like to sail",
        "the nine o'clock one please",
        "lovely and how many people will be travelling with you",
    )
    [finding] = _run("repeated_question", dialogue)
    assert [e.turn for e in finding.evidence] == [0, 2]


def test_a_narrower_follow_up_on_the_answer_is_not_a_repeat():
    dialogue = _dialogue(
        "I'd like a check-up",
        "Which date would suit you?",
        "sometime in March",
        "Which date in March would suit you?",
    )
    assert _run("repeated_question", dialogue) == []


def test_a_price_restated_differently_later_is_a_self_contradiction():
    dialogue = _dialogue(
        "what does a transfer to Canada cost?",
        "International transfers incur a flat fee of $15, and an exchange margin may apply.",
        "ok, and for $2,000?",
        "For a transfer of $2,000 to Canada, the flat fee would be $25.",
    )
    [finding] = _run("self_contradiction", dialogue)
    assert finding.turn_index == 1 and finding.subject == "the flat fee would be $25."


@pytest.mark.parametrize(
    "later",
    [
        "Yes, the flat fee is $15 whatever the amount.",  # the same figure
        "Sorry, I was wrong earlier: the flat fee is $25.",  # an acknowledged correction
        "Express delivery is $25.",  # another thing
    ],
)
def test_the_same_figure_a_correction_or_another_item_is_not(later):
    dialogue = _dialogue(
        "what does a transfer cost?",
        "International transfers incur a flat fee of $15.",
        "and then?",
        later,
    )
    assert _run("self_contradiction", dialogue) == []


@pytest.mark.parametrize(
    "earlier, customer, later",
    [
        # A free extra later charged; "free if you need one" is an offer, not a condition.
        (
            "Child seats are free if you need one.",
            "yes one for my 3 yo pls",
            "It's the $52 flat rate plus $10 for the child seat.",
        ),
        # A duration with a qualifier between number and unit.
        ("Response within 4 business hours.", "and on a friday?", "A response within 1 hour."),
        # A figure qualifying the noun after it; years as a span.
        (
            "Your inverter is covered by a 12-year warranty.",
            "and install?",
            "Install takes 2 days. Don't forget, your inverter comes with a 10-year warranty.",
        ),
        # A voice transcript: no punctuation, each figure's subject said before it.
        (
            "yes nail clips are done in our nurse clinics which cost eighteen pounds we're open on "
            "saturdays from nine am until twelve pm what time would suit you",
            "about eleven",
            "thank you pickle is booked for a nurse clinic at eleven am on saturday the nail clip "
            "will cost twenty five pounds please arrive five minutes early",
        ),
    ],
)
def test_a_figure_changed_without_saying_so_is_a_self_contradiction(earlier, customer, later):
    dialogue = _dialogue("hi", earlier, customer, later)
    [finding] = _run("self_contradiction", dialogue)
    assert finding.turn_index == 1


@pytest.mark.parametrize(
    "earlier, customer, later",
    [
        # A worked line is no restatement of the unit price.
        ("Our box pack is £35 with 20 boxes.", "two please", "Booked: 2 x box pack = £70."),
        # What a change makes of a figure.
        (
            "Basic cover has an excess of €1,200.",
            "and no excess?",
            "Super cover reduces the excess to €0.",
        ),
        # An order total after the order changed.
        ("That's 645 kr in total.", "make it the grand one", "That's 945 kr in total."),
        ("Total: € 174,00", "can we do 4 nights, arriving 2 august?", "Total: € 232,00"),
    ],
)
def test_worked_figures_changes_and_new_totals_are_not_self_contradictions(
    earlier, customer, later
):
    assert _run("self_contradiction", _dialogue("hi", earlier, customer, later)) == []


@pytest.mark.parametrize(
    "given, ask, detail",
    [
        (
            "Lena Fischer, mobile 0176 4412 8830",
            "What's the best mobile number to reach you?",
            "phone",
        ),
        (
            "table for 7 on saturday, name Marcus",
            "And how many people will be in your group?",
            "party",
        ),
        ("no water at home, postcode BS5 6QT", "Please enter your postcode.", "postcode"),
        (
            "blood test please, DOB 14/02/1987",
            "Before I can book, please confirm your date of birth.",
            "birth",
        ),
        ("booster for my cat Miso please", "What is your pet's name?", "their name"),
        ("status of order QP-20931", "Enter order number.", "reference"),
        ("ok and my son is 10 does he need a ticket", "Please state age of child.", "age"),
        ("service at 7 Linden Close, Kettering", "Please confirm the full address.", "address"),
        ("lol ok. 07700 900182. call me", "whats ur number and ill get dave to call", "phone"),
    ],
)
def test_asking_for_a_detail_the_customer_already_gave_is_a_repeat(given, ask, detail):
    dialogue = _dialogue(given, "Thanks! We can do that.", "great", ask)
    [finding] = _run("repeated_question", dialogue)
    assert finding.turn_index == 1 and finding.severity == "minor"
    assert detail in finding.rationale
    customer = [e for e in finding.evidence if e.source == "customer"]
    assert customer and customer[0].turn == 0 and customer[0].quote in given


@pytest.mark.parametrize(
    "given, ask",
    [
        # The number given is unusable: asking again is right.
        (
            "my number is 0161 496 07",
            "That number looks like it's missing digits, could you send it in full?",
        ),
        # A second value, not the same one.
        ("my mobile is 07700 900482", "Do you have another number, a landline perhaps?"),
        # A read-back to confirm, not a re-ask.
        ("my mobile is 07700 900482", "Is 07700 900482 the best number to reach you?"),
        # Only a first name was given: the full name is a new detail.
        ("i'm Lena", "Could I have your full name for the booking?"),
        # Someone else's name, not the customer's.
        ("i'm Lena Fischer", "What is your pet's name?"),
        # An email address is not the street address; a time is no age; a reference read back.
        ("service at 7 Linden Close, Kettering", "What's your email address?"),
        ("my son is 10:30 at school", "How old is he?"),
        ("order QP-20931", "Is QP-20931 your order number?"),
    ],
)
def test_asking_again_for_a_reason_or_for_something_else_is_no_repeat(given, ask):
    assert (
        _run("repeated_question", _dialogue(given, "Thanks! We can do that.", "great", ask)) == []
    )


def test_a_detail_asked_twice_after_it_was_given_is_one_major_finding():
    dialogue = _dialogue(
        "hi, Marcus Adeyemi here, 07700 900123",
        "Thanks Marcus! What's your phone number?",
        "i just gave it",
        "Sorry! Could I take a contact number please?",
    )
    [finding] = _run("repeated_question", dialogue)
    assert finding.severity == "major"
    assert [e.turn for e in finding.evidence if e.source == "reply"] == [0, 1]


def test_a_zero_amount_after_a_free_piece_is_read_without_error():
    # "€0" is a money figure of 0 in a piece of its own, after a piece that says "free".
    dialogue = _dialogue(
        "excess?",
        "Basic cover is free, with an excess of €0 on glass.",
        "and the premium one?",
        "Premium has an excess of €0 too.",
    )
    assert _run("self_contradiction", dialogue) == []


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("tutuor", "tutor", True),  # a letter added
        ("reciev", "receiv", True),  # two letters swapped
        ("sesion", "sessio", True),  # a letter left out, seen through six-letter stems
        ("price", "prize", False),  # another word, not a slip
        ("hour", "hours", False),  # too short to call a typo
        ("parking", "parking", False),  # the same word is no typo
    ],
)
def test_typos_are_one_slip_of_five_letters_or_more(a, b, expected):
    assert typo_of(a, b) is expected


def test_the_customers_own_words_for_the_service_said_back_are_no_other_choice():
    """The reference bot saying "Emergency appointment costs 95€" back to a customer who asked
    for the emergency appointment restates their choice (a clean Quick's false major, seed
    22)."""
    # A prose price list: the catalogue reads "Emergency appointment costs" as an item too.
    kb = "## Prices\nEmergency appointment costs 95 EUR and takes about 30 minutes.\n"
    dialogue = _dialogue(
        "hey how much is Emergency appointment",
        "Emergency appointment: Price: 95 EUR.",
        "how long does it take",
        "Emergency appointment costs 95€ and takes about 30 minutes.",
        kb=kb,
    )
    assert _run("partner_contradiction", dialogue, org=True) == []
