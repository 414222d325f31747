"""The `openai-chat:` responder: a bot defined by a model, a system prompt and how the KB
reaches it, called through the lab's LLM layer (role `responder`).

    openai-chat:[MODEL]?prompt=file:PATH|text:TEXT[&kb=retrieve:K|full|none]

MODEL defaults to QALAB_RESPONDER_MODEL. `kb=retrieve:K` (default `retrieve:4`) puts the K
passages of the case's fixture KB that best match the customer's latest message in the system
message, `full` the whole fixture KB, `none` nothing; each is fenced as untrusted data. Values
are percent-decoded (`%26` is `&`). The lab appends the JSON tail convention to the system
message and reads the tail back (`runs.simulator.json_tail`). With the offline engine the
reference bot's reply, written with its tail, stands in for the model.

A `prompt=file:` path is relative to the project (absolute paths work too). It must be a
regular file inside the project or a folder of QALAB_RESPONDER_PROMPT_DIRS (the web form: only
those folders), reached through no symbolic link and no hidden file or folder.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from qalab.llm import Engine, NullLedger, OfflineEngine
from qalab.llm.base import Message
from qalab.llm.prompts import fence, load_prompt
from runs.simulator.contract import ResponderReply, ResponderRequest, ResponderUsage
from runs.simulator.json_tail import render_tail, split_tail
from runs.simulator.reference import reference_respond
from runs.simulator.retrieval import kb_index

PREFIX = "openai-chat"
SPEC_FORM = "openai-chat:[MODEL]?prompt=file:PATH|text:TEXT[&kb=retrieve:K|full|none]"
OPTIONS = ("prompt", "kb")
KB_DEFAULT = "retrieve:4"
MAX_K = 20
MAX_PROMPT_BYTES = 64_000
MAX_TOKENS = 400
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$")
# A folder of its own: only runs of this responder carry these prompts in their snapshot.
_PROMPTS = Path(__file__).resolve().parent / "prompts" / "openai_chat"
KB_PROMPT = load_prompt(_PROMPTS, "kb")
TAIL_PROMPT = load_prompt(_PROMPTS, "tail")
LAB_PROMPTS = {
    f"simulator/openai_chat/{p.name}.v{p.version}": p.sha256 for p in (KB_PROMPT, TAIL_PROMPT)
}


def is_openai_chat(spec: str) -> bool:
    return spec == PREFIX or spec.startswith((f"{PREFIX}:", f"{PREFIX}?"))


@dataclass(frozen=True)
class ChatSpec:
    """A parsed `openai-chat:` spec, its system prompt read."""

    model: str  # "" = the engine's responder model (QALAB_RESPONDER_MODEL)
    prompt: str
    prompt_file: str  # the path as written; "" for prompt=text:
    kb: str  # "retrieve", "full" or "none"
    k: int  # passages per turn for "retrieve"

    @property
    def prompt_hashes(self) -> dict[str, str]:
        """The prompt file's sha256 under `openai-chat/<path>`, for the run's snapshot (a
        `text:` prompt is part of the spec itself)."""
        if not self.prompt_file:
            return {}
        return {f"{PREFIX}/{self.prompt_file}": sha256(self.prompt)}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_spec(spec: str, *, web: bool = False) -> ChatSpec:
    """The spec parsed and its prompt read; ValueError saying what is wrong and how to write
    it. `web`: a prompt file must be in QALAB_RESPONDER_PROMPT_DIRS, not just the project."""
    spec = (spec or "").strip()
    if not is_openai_chat(spec):
        raise ValueError(f"responder {spec!r} is not an {PREFIX} spec ({SPEC_FORM})")
    head, _, query = spec.partition("?")
    model = head[len(PREFIX) :].removeprefix(":")
    if model and not _MODEL.match(model):
        raise ValueError(
            f"responder {spec!r}: {model!r} is not a model name (letters, digits and ._:/@+-, "
            "at most 200); leave it out for QALAB_RESPONDER_MODEL"
        )
    options = _options(spec, query)
    if "prompt" not in options:
        raise ValueError(
            f"responder {spec!r}: give the bot's system prompt with prompt=file:PATH or "
            f"prompt=text:TEXT ({SPEC_FORM})"
        )
    kind, sep, value = options["prompt"].partition(":")
    if not sep or kind not in ("file", "text"):
        raise ValueError(
            f"responder {spec!r}: prompt= takes file:PATH or text:TEXT, not {options['prompt']!r}"
        )
    if kind == "text":
        prompt, prompt_file = value.strip(), ""
        if not prompt:
            raise ValueError(f"responder {spec!r}: prompt=text: is empty")
    else:
        try:
            prompt, prompt_file = read_prompt_file(value, web=web), value
        except ValueError as exc:
            raise ValueError(f"responder {spec!r}: {exc}") from None
    kb, k = _kb(spec, options.get("kb", KB_DEFAULT))
    return ChatSpec(model=model, prompt=prompt, prompt_file=prompt_file, kb=kb, k=k)


def _options(spec: str, query: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for part in query.split("&") if query else []:
        key, sep, value = part.partition("=")
        key = unquote(key).strip()
        if not sep or not key:
            raise ValueError(f"responder {spec!r}: {part!r} is not name=value ({SPEC_FORM})")
        if key not in OPTIONS:
            raise ValueError(
                f"responder {spec!r}: unknown option {key!r}; options are {', '.join(OPTIONS)}"
            )
        if key in options:
            raise ValueError(f"responder {spec!r}: option {key!r} is given twice")
        options[key] = unquote(value)
    return options


def _kb(spec: str, value: str) -> tuple[str, int]:
    value = value.strip()
    if value in ("full", "none"):
        return value, 0
    kind, _, k = value.partition(":")
    if kind == "retrieve" and k.isascii() and k.isdigit() and 1 <= int(k) <= MAX_K:
        return "retrieve", int(k)
    if kind == "retrieve":
        raise ValueError(
            f"responder {spec!r}: kb=retrieve:K needs a whole number K from 1 to {MAX_K}, not {k!r}"
        )
    raise ValueError(f"responder {spec!r}: kb= takes retrieve:K, full or none, not {value!r}")


def prompt_roots(*, web: bool) -> list[Path]:
    """Folders a prompt file may come from: QALAB_RESPONDER_PROMPT_DIRS (relative to the
    project), and the project itself unless `web`."""
    from django.conf import settings

    project = Path(settings.BASE_DIR)
    roots = [project / d for d in settings.QALAB_RESPONDER_PROMPT_DIRS]
    return roots if web else [project, *roots]


def read_prompt_file(raw: str, *, web: bool) -> str:
    """The text of prompt file `raw` (see the module docstring for where it may be)."""
    from django.conf import settings

    shown = raw
    raw = raw.strip()
    if not raw:
        raise ValueError("prompt=file: needs a path")
    path = Path(raw)
    if not path.is_absolute():
        path = Path(settings.BASE_DIR) / path
    path = Path(os.path.normpath(path))
    roots = prompt_roots(web=web)
    inside = _root_of(path, roots)
    if inside is None:
        where = (
            "QALAB_RESPONDER_PROMPT_DIRS" if web else "the project or QALAB_RESPONDER_PROMPT_DIRS"
        )
        folders = ", ".join(str(r) for r in roots) or "none set"
        raise ValueError(
            f"prompt file {shown!r} is outside {where} ({folders}); the "
            + ("web form reads prompt files only from there" if web else "lab reads none elsewhere")
            + ": move it into one of them or add its folder to QALAB_RESPONDER_PROMPT_DIRS"
        )
    root, relative = inside
    current = root
    for part in relative.parts:
        if part.startswith("."):
            raise ValueError(f"prompt file {shown!r}: hidden files and folders are not read")
        current = current / part
        if current.is_symlink():
            raise ValueError(f"prompt file {shown!r} goes through a symbolic link ({current})")
    if not Path(os.path.realpath(path)).is_relative_to(root.resolve()):
        raise ValueError(f"prompt file {shown!r} resolves outside {root}")  # belt and braces
    if not path.is_file():
        raise ValueError(f"prompt file {shown!r} does not exist or is not a file ({path})")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_PROMPT_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"prompt file {shown!r} cannot be read: {exc}") from exc
    if len(data) > MAX_PROMPT_BYTES:
        raise ValueError(f"prompt file {shown!r} is over {MAX_PROMPT_BYTES:,} bytes")
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise ValueError(f"prompt file {shown!r} is not UTF-8 text") from exc
    if not text:
        raise ValueError(f"prompt file {shown!r} is empty")
    return text


def _root_of(path: Path, roots: list[Path]) -> tuple[Path, Path] | None:
    """(root, path relative to it) for the first root holding `path`: as written, or with
    the root's own symbolic links resolved (an operator's folder may be one)."""
    for root in roots:
        for form in dict.fromkeys((Path(os.path.normpath(root)), root.resolve())):
            if path.is_relative_to(form) and path != form:
                return form, path.relative_to(form)
    return None


class OpenAIChatResponder:
    """Sends the conversation to a chat model with the team's system prompt and KB; reads the
    reply's JSON tail into status and extracted fields."""

    def __init__(self, spec: str) -> None:
        self.spec = spec.strip()
        self.chat = parse_spec(self.spec)

    @property
    def model(self) -> str:
        return self.chat.model

    @property
    def prompt_hashes(self) -> dict[str, str]:
        """sha256 of every prompt this bot is sent (the lab's parts and the team's file), for
        the run's snapshot."""
        return {**LAB_PROMPTS, **self.chat.prompt_hashes}

    def respond(self, request: ResponderRequest, *, engine: Engine, purpose: str) -> ResponderReply:
        def offline() -> str:
            # The lab's reference bot stands in for the model; its own meter is thrown away.
            ref = reference_respond(
                request, engine=OfflineEngine(ledger=NullLedger()), purpose=purpose
            )
            return render_tail(ref.reply, ref.status, ref.extracted)

        result = engine.chat(
            role="responder",
            purpose=purpose,
            messages=chat_messages(self.chat, request),
            max_tokens=MAX_TOKENS,
            offline=offline,
            model=self.chat.model or None,
        )
        tail = split_tail(result.text)
        return ResponderReply(
            reply=tail.reply,
            extracted=tail.extracted,
            status=tail.status,
            usage=ResponderUsage(
                prompt_tokens=result.usage.prompt_tokens,
                completion_tokens=result.usage.completion_tokens,
            ),
        )


def chat_messages(chat: ChatSpec, request: ResponderRequest) -> list[Message]:
    """The system message (prompt, KB, tail convention) and the whole conversation."""
    parts = [chat.prompt]
    if chat.kb == "full":
        documents = [fence(f"[{e.id}] {e.title}\n{e.text}", "kb") for e in request.kb]
        parts.append(
            KB_PROMPT.render(how="the organization's documents", documents=_join(documents))
        )
    elif chat.kb == "retrieve":
        latest = next((m.content for m in reversed(request.messages) if m.role == "customer"), "")
        hits = kb_index(request.kb).search(latest, k=chat.k) if request.kb else []
        passages = [fence(f"[{p.doc_id}] {p.title}\n{p.text}", "kb") for _, p in hits]
        how = "the passages that best match the customer's latest message"
        parts.append(KB_PROMPT.render(how=how, documents=_join(passages)))
    fields = ", ".join(
        f"{f.key} ({f.label}{', required' if f.required else ''})" for f in request.intake_fields
    )
    parts.append(TAIL_PROMPT.render(fields=fields or "none"))
    history: list[Message] = [
        {"role": "user" if m.role == "customer" else "assistant", "content": m.content}
        for m in request.messages
    ]
    return [{"role": "system", "content": "\n\n".join(parts)}, *history]


def _join(blocks: list[str]) -> str:
    return "\n".join(blocks) if blocks else "(nothing found)"
