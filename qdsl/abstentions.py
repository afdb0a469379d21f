"""The answers that state no data: a clarifying question, insufficient evidence,
a plan no template covers, an answer the verifier refused, a conversation move.

Apart from `qdsl.render` because none of them reads a result: each is the same
sentence whatever the catalog holds, in the question's language.
"""

from __future__ import annotations

from collections.abc import Sequence

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import AnswerContract
from qdsl.phrases import entity_name
from qdsl.verifier import Answer, Language


def clarification(
    language: Language,
    reason: str | None = None,
    *,
    catalog: Catalog | None = None,
    sentence: str | None = None,
) -> Answer:
    """Ask the user to clarify: with the reading's own `sentence` (which words were
    not applied and what could carry them) when there is one, else generically,
    naming the catalog's entities."""
    if sentence:
        text = sentence
    else:
        kinds = ""
        if catalog is not None:
            names = [entity_name(catalog, e, language) for e in catalog.entities][:6]
            kinds = (
                ("（" + "、".join(names) + "…）") if language == "zh" else f" ({', '.join(names)}…)"
            )
        if language == "zh":
            text = f"请再具体一点：想查哪类对象{kinds}，想知道什么（是否存在、数量、列表、状态）？"
        else:
            text = (
                f"Could you be more specific: which kind of object{kinds} "
                "and what about it (whether any exist, how many, which ones, their status)?"
            )
    if reason:
        text = f"{text} ({reason})"
    return Answer(
        contract=AnswerContract.CLARIFY_OR_FAIL,
        text=text,
        data={"clarification": text},
        language=language,
    )


def insufficient(language: Language, contract: AnswerContract) -> Answer:
    text = (
        "证据不足：这次查询读到的数据不足以可靠地回答这个问题。"
        if language == "zh"
        else "Insufficient evidence: the data read for this question cannot back an answer."
    )
    return Answer(contract=contract, text=text, data={}, language=language)


def not_covered(language: Language, reason: str) -> Answer:
    """No template covers the plan: said plainly, with nothing to clarify from."""
    text = (
        f"当前内部查询模板未覆盖这个问题：{reason}"
        if language == "zh"
        else f"No query template covers this question: {reason}"
    )
    return Answer(
        contract=AnswerContract.CLARIFY_OR_FAIL,
        text=text,
        data={"clarification": text},
        language=language,
    )


def refused(language: Language, contract: AnswerContract, failed: Sequence[str]) -> Answer:
    """The verifier refused the answer: the failed checks are named, no data leaves."""
    names = ", ".join(failed)
    text = (
        f"答案未通过校验，已拒绝（{names}）。"
        if language == "zh"
        else f"The answer failed verification and was refused ({names})."
    )
    return Answer(contract=contract, text=text, language=language)


def gated(language: Language, kind: str) -> str:
    """The text for a conversation move stopped by the ingress gate."""
    if language == "zh":
        return f"这是一条会话指令（{kind}），不做数据查询。"
    return f"This is a conversation move ({kind}), not a data question."
