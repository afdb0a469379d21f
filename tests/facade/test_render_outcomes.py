"""The texts of answers that carry no data: not covered, refused, gated."""

from __future__ import annotations

from qdsl.abstentions import gated, not_covered, refused
from qdsl.dsl.ir import AnswerContract


def test_not_covered_names_the_reason_and_asks_for_clarification() -> None:
    zh = not_covered("zh", "no template")
    assert zh.text == "当前内部查询模板未覆盖这个问题：no template"
    assert zh.contract is AnswerContract.CLARIFY_OR_FAIL
    assert zh.data == {"clarification": zh.text}
    en = not_covered("en", "no template")
    assert en.text == "No query template covers this question: no template"


def test_refused_names_the_failed_checks_and_carries_no_data() -> None:
    failed = ("evidence_backed", "covers_conditions")
    zh = refused("zh", AnswerContract.ENTITY_LIST, failed)
    assert zh.text == "答案未通过校验，已拒绝（evidence_backed, covers_conditions）。"
    assert zh.contract is AnswerContract.ENTITY_LIST
    assert zh.data == {}
    assert refused("en", AnswerContract.COUNT_SCALAR, failed).text == (
        "The answer failed verification and was refused (evidence_backed, covers_conditions)."
    )


def test_gated_says_it_is_a_conversation_move() -> None:
    assert gated("zh", "protocol_reply") == "这是一条会话指令（protocol_reply），不做数据查询。"
    assert gated("en", "protocol_reply") == (
        "This is a conversation move (protocol_reply), not a data question."
    )
