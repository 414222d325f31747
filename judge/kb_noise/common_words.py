"""Everyday English words (`COMMON_WORDS`): never a typo themselves, and the right spelling
a KB word one edit away from one of them misspells."""

from __future__ import annotations

# Everyday English words, for two jobs: a word listed here is never a typo, and a KB word one
# edit away from one that is not itself listed is one. Generic on purpose (no domain terms; the
# KB's own frequent words and the manifest cover those), and it includes both sides of the
# usual confusable pairs (lest/least, dairy/diary, quite/quiet ...).
_COMMON_TEXT = """
    a able about above accept access accident account across act action active activity actual
    actually add added address adult advance advice advise affect afford after afternoon again
    against age agency agent ago agree agreed ahead aid aim air all allow allowed almost alone
    along already also alter alternative although always am among amount an and angel angle
    animal another answer answered any anyone anything anyway anywhere apart apply appointment
    appointments approach area areas arm around arrange arrive arrival art article as ask asked
    asking assist at attend attention available avoid away baby back bad bag balance bank bar
    base based basic basis be bear became because become bed been before began begin behind
    being believe below best better between big bill birth bit black blood blue board body book
    booked booking bookings both bottom box break breakfast bridge bridal bridle brief bring
    broad broken brother brought brown build building built burn business busy but buy by call
    called calling calls came can cancel cancelled canceled card care careful carry case cash
    casual causal cause cell centre center certain chain chair chance change changed changes
    charge charged charges chat cheap check checked checks cheek child children choice choose
    chosen church city claim class clean cleaned cleaner clear clearly client clients clinic
    close closed closer closes closing clothes coat code cold collect collected college colour
    color come comes coming comfort comment common company complete completed concern condition
    confirm confirmed consider contact contain content continue control cook cool copy corner
    correct cost costs could council count country couple course court cover covered covers
    create credit cross current custom customer customers cut daily dairy damage dark data date
    dates daughter day days dead deal dear death decide decision deep deliver delivery department
    deposit depth desert dessert design detail details develop diary did die diet differ
    difference different difficult dinner direct direction directly discount distance do doctor
    does dog doing done door double down draw dress drink drive driver drop dry due during each
    ear early earn east easy eat edge effect effort either else email emergency employee end
    energy enjoy enough enquiry ensure enter entire entry equal error especially even evening
    event ever every everyone everything exact exactly exam example except excess exchange
    expect expected expense experience explain extra eye face fact factor fail fair fall family
    far farm fast father fault fear fee fees feel feet felt few field fill filled final finally
    find fine finger finish fire firm first fit five fix fixed flat floor fly follow following
    food foot for force form former forward found four free fresh friday friend from front full
    fully fund further future gain game garden gas gave general get gets getting girl give given
    gives giving glad glass go goes going gone good got great green ground group grow guard
    guest guide had hair half hall hand handle happen happy hard has have having he head health
    hear heard heart heat held help here high him his hold holiday home hope hospital hot hotel
    hour hours house how however human hundred idea if ill important in include included
    includes including increase indeed inform information inside instead insurance interest
    into involve is issue it item items its itself job join journey just keep kept key kind kit
    knew know known label lady land large last late later latter law lay lead learn least leave
    left leg legal lend length less lest let letter level licence license lie life light like
    likely limit line link list listed little live local lock long look loose lose loss lost lot
    love low lunch made mail main major make makes making man manage manager many mark market
    matter may maybe me meal mean meet member message met method middle might mile mind minute
    minutes miss missed model moment monday money month months more morning most mother move
    much must my name near nearest nearly need needed needs never new news next nice night no
    none noon normal north not note notice now number numbers of off offer offered offers office
    often oil ok old on once one online only open opened opening opens or order other others our
    out outside over own page paid pain pair paper parent parents park part party pass passed
    past pay payment people per perhaps period person phone pick picture piece place plan plans
    play please plus point police policy poor popular position possible post pound power
    practice practise prefer preferred prepare present press pretty price prices print private
    probably problem process product program programme promise proper provide public pull
    purpose put quarter question questions quick quickly quiet quite quote quoted rain range rate
    rather reach read ready real really reason receipt receive received recent record red reduce
    refund regular remain remember remind remove rent repair repeat reply report request
    requested require required rest result return right ring rise road room round rule run safe
    safety said sale same saturday save saw say says school sea seat second section see seem
    seen sell send sent service services set seven several shall share she shop short should
    show side sign simple since single sister sit site six size skin sleep slow small so some
    someone something sometimes son soon sorry sort sound south space speak special spend spent
    spoke sport sports spring staff stage stand standard start started state stay step still
    stock stop store story street strong student study such suit summer sun sunday supply
    support sure surface system table take taken takes taking talk team tell ten term terms test
    than thank thanks that the their them then there these they thing things think third this
    those though three through thursday time times title to today together told tomorrow too
    took top total touch toward town track trade trail train travel treat trial trip true try
    tuesday turn two type under understand unit until up upon us use used useful user usual
    usually value various very visit visits wait waiting walk wall want wanted warm was wash
    watch water way we wear wednesday week weekend weeks well went were west what when where
    whether which while white who whole why wide wife will win window winter wish with within
    without woman wonder word words work worked working world worry would write written wrong
    year years yes yet you young your yours
    subject reception treatment optional session minimum maximum weekday weekdays holidays
    schedule invoice voucher membership register registration cancellation availability
    location parking entrance accessible wheelchair patient patients owner collection repairs
    warranty guarantee estimate estimated additional excluding approximately roughly typically
    january february march april june july august september october november december
    united untied sacred scared silver sliver salt marital martial
    doesn isn wasn aren weren hasn haven hadn didn couldn wouldn shouldn won don can
"""
COMMON_WORDS = frozenset(_COMMON_TEXT.split())
