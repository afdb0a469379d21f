"""Number words to Arabic digits, so the count checks see an amount however it is written.

An answer written elsewhere may say "一百三十七个项目", "十四个", "壹佰叁拾柒" or
"one hundred and thirty-seven projects" where our renderer writes "137".
`rewrite_numerals` returns the text with such numerals replaced by digits plus a
position map, so spans found in the original text (a label, say) can be moved
onto the rewritten one.

Rules (each exists to keep a false alarm out, since a rewritten number can fail
an answer):

* Full-width ASCII (U+FF01..FF5E) and the ideographic space become ASCII, one
  character for one, so positions do not move ("１３７" -> "137").
* Chinese: a maximal run of numeral characters (零〇一二两三..九 十百千 万亿,
  financial 壹贰..玖 拾佰仟, Arabic digits directly beside a unit as in "1万2千")
  is rewritten only when it parses as one number and
    - it has two or more characters ("十四", "二十", "一百零七", "两千零五",
      "1万"), or
    - it is one character followed by a classifier ("三个", "两家", "十项").
  So the 一 in 统一/唯一/一共/一起 and the 百 in 百度/老百姓 stay words. Not
  rewritten: ordinals (after 第), approximations ("几十", "数百", "三四个", whose
  two bare digits are no single number), clock times (after 点), idioms listed in
  `_ZH_IDIOMS` (千万/万一/一次性/"一个都没有"...), financial characters mixed with
  everyday ones ("收拾一下" is not 11), and runs touching other ASCII digits (the
  result would merge into a different number). Digit-by-digit readings need three
  digits or a 零/〇 ("二〇二六" -> 2026). "百分之三十" -> "30%"; "三点五" -> "3.5".
* English: cardinal words zero..nineteen, the tens, hundred, thousand, million,
  billion, joined by spaces, hyphens or "and" after hundred/thousand ("twenty-one",
  "a hundred and thirty-seven", "14 thousand"), rewritten when they form one valid
  number. Words are whole tokens ("someone" is no "one"). Not rewritten: a number
  hyphenated to another word ("one-off", "fourteen-day"), one touching digits, and
  a lone "one" used as a pronoun - after no/any/every/some/the/this/that/which/
  each/only/another... or before of/another/by/or ("no one", "one of them").
  Ordinals ("first") and plurals ("hundreds of") are not amounts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

__all__ = ["Rewritten", "parse_chinese", "parse_english", "rewrite_numerals", "to_digits"]

_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}

_ZH_DIGITS = {
    **dict.fromkeys("零〇", 0),
    "一": 1,
    **dict.fromkeys("二两兩", 2),
    **{c: i for i, c in enumerate("三四五六七八九", start=3)},
}
_FIN_DIGITS = {
    "壹": 1,
    **dict.fromkeys("贰貳", 2),
    **dict.fromkeys("叁參", 3),
    "肆": 4,
    "伍": 5,
    **dict.fromkeys("陆陸", 6),
    "柒": 7,
    "捌": 8,
    "玖": 9,
}
_SMALL_UNITS = {"十": 10, "百": 100, "千": 1000, "拾": 10, "佰": 100, "仟": 1000}
_BIG_UNITS = {"万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8}
_EVERYDAY_ONLY = frozenset("〇一二两兩三四五六七八九十百千")
_FINANCIAL = frozenset(_FIN_DIGITS) | frozenset("拾佰仟")
_UNITS = "".join(_SMALL_UNITS) + "".join(_BIG_UNITS)
_UNIT_CHARS = frozenset(_UNITS)
_ZH_CHARS = "".join(_ZH_DIGITS) + "".join(_FIN_DIGITS) + _UNITS
_ZH_RUN = re.compile(
    rf"(?:[0-9]+(?:\.[0-9]+)?(?=[{_UNITS}])|(?<=[{_UNITS}])[0-9]+|[{_ZH_CHARS}])+"
    rf"(?:点[{''.join(_ZH_DIGITS)}]+(?![{_UNITS}分]))?"
)
# Classifiers that count things; dates (月/日/号) and durations are left out.
_CLASSIFIERS = frozenset(
    "个個项項条條份家位名篇只隻种種件台部批组組类類笔筆套支张張本所座间間封段则例人次处處款"
)
_ZH_IDIOMS = (
    "千万",
    "万万",
    "万一",
    "一次性",
    "一部分",
    "零件",
    "零星",
    *(f"一{c}{tail}" for c in "个项条家份件位名次" for tail in "都也"),
)
# A leading 一 that ends a word before it (统一, 唯一, 之一) is not the run's.
_ONE_ENDS_WORD_AFTER = frozenset("统唯之同单逐划归专合不任每其另这那哪某")
_SKIP_AFTER = frozenset("第几点")
_ASCII_DIGITS = frozenset("0123456789")
_APPROX_BEFORE_UNIT = frozenset("几数")


@dataclass(frozen=True)
class Rewritten:
    """Rewritten text and where each edit sits: (orig_start, orig_end, new_start, new_end)."""

    original: str
    text: str
    edits: tuple[tuple[int, int, int, int], ...]

    def _map(self, i: int, *, end: bool) -> int:
        shift = 0
        for o0, o1, n0, n1 in self.edits:
            if o0 < i < o1:
                return n1 if end else n0
            if o1 <= i:
                shift = n1 - o1
        return i + shift

    def position(self, i: int) -> int:
        """Where original index `i` (a start) lands in the rewritten text."""
        return self._map(i, end=False)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The rewritten span covering original [start, end); edits inside it grow it."""
        return self._map(start, end=False), self._map(end, end=True)


def _fmt(value: Decimal) -> str:
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def _tokens(run: str) -> list[tuple[str, Decimal]] | None:
    out: list[tuple[str, Decimal]] = []
    for m in re.finditer(r"[0-9]+(?:\.[0-9]+)?|.", run):
        t = m.group()
        if t[0].isdigit():
            out.append(("num", Decimal(t)))
        elif t in "零〇":
            out.append(("zero", Decimal(0)))
        elif t in _ZH_DIGITS or t in _FIN_DIGITS:
            out.append(("digit", Decimal(_ZH_DIGITS.get(t) or _FIN_DIGITS[t])))
        elif t in _SMALL_UNITS:
            out.append(("unit", Decimal(_SMALL_UNITS[t])))
        elif t in _BIG_UNITS:
            out.append(("big", Decimal(_BIG_UNITS[t])))
        else:
            return None
    return out


def parse_chinese(run: str) -> Decimal | None:
    """The value of a whole Chinese numeral ("一百零七", "1万2千", "二〇二六"), or None."""
    tokens = _tokens(run)
    if not tokens:
        return None
    if set(run) & _FINANCIAL and set(run) & _EVERYDAY_ONLY:
        return None
    if not {"unit", "big"} & {k for k, _ in tokens}:
        return _digit_reading(run, tokens)
    reader = _ChineseReader()
    for i, (kind, v) in enumerate(tokens):
        if not reader.feed(kind, v, first=i == 0):
            return None
    return reader.value()


def _digit_reading(run: str, tokens: list[tuple[str, Decimal]]) -> Decimal | None:
    """A run without units: one digit, or a digit-by-digit reading ("二〇二六")."""
    kinds = [k for k, _ in tokens]
    if len(tokens) == 1:
        return tokens[0][1] if kinds[0] != "num" else None
    plain = "num" not in kinds and not set(run) & ({"两", "兩"} | _FINANCIAL)
    if plain and (len(tokens) >= 3 or "zero" in kinds):
        return Decimal("".join(str(int(v)) for _, v in tokens))
    return None  # "三四" is three or four, not thirty-four


class _ChineseReader:
    """A numeral with units read token by token; `feed` says whether the token fits."""

    def __init__(self) -> None:
        self.total = Decimal(0)
        self.section = Decimal(0)
        self.pending: Decimal | None = None
        self.last_unit: Decimal | None = None
        self.last_big: Decimal | None = None
        self.after_zero = False

    def feed(self, kind: str, v: Decimal, *, first: bool) -> bool:
        if kind in ("digit", "num", "zero"):
            if self.pending is not None:
                return False
            if kind == "zero":
                self.after_zero = True
            else:
                self.pending = v
            return True
        if kind == "unit":
            return self._unit(v, first=first)
        return self._big(v)

    def _unit(self, v: Decimal, *, first: bool) -> bool:
        pending = self.pending
        if pending is None:
            if not first and not self.after_zero:
                return False
            pending = Decimal(1)  # "十四", "百万", "一千零十"
        if self.last_unit is not None and v >= self.last_unit:
            return False
        self.section += pending * v
        self.last_unit, self.pending, self.after_zero = v, None, False
        return True

    def _big(self, v: Decimal) -> bool:
        if self.pending is not None:
            self.section += self.pending
        if self.section == 0 or (self.last_big is not None and v >= self.last_big):
            return False
        self.total += self.section * v
        self.section, self.pending, self.last_unit = Decimal(0), None, None
        self.last_big, self.after_zero = v, False
        return True

    def value(self) -> Decimal | None:
        pending, section = self.pending, self.section
        if pending is not None:
            scale = self.last_unit if self.last_unit is not None else self.last_big
            if scale is not None and not self.after_zero and pending < 10:
                pending *= scale / 10  # "十四"; colloquial "一万二" = 12000, "三千五" = 3500
            elif scale is not None and pending >= scale:
                return None  # "十14"
            section += pending
        return self.total + section


# Every run `_ZH_RUN` finds holds one of these (digits join a run only beside a unit).
_ZH_ANY = re.compile(f"[{_ZH_CHARS}]")


def _chinese_edits(text: str) -> list[tuple[int, int, str]]:
    if _ZH_ANY.search(text) is None:
        return []
    return _read_chinese(text)


def _read_chinese(text: str) -> list[tuple[int, int, str]]:
    """Every Chinese numeral of `text`, run by run."""
    edits: list[tuple[int, int, str]] = []
    for m in _ZH_RUN.finditer(text):
        start, end = m.span()
        run = m.group()
        ends_word = start > 0 and text[start - 1] in _ONE_ENDS_WORD_AFTER
        if run[0] == "一" and ends_word and run[1:2] not in _UNIT_CHARS:  # 这一百 is 100
            start, run = start + 1, run[1:]
            if not run:
                continue
        before = text[start - 1] if start > 0 else ""
        after = text[end] if end < len(text) else ""
        if before in _SKIP_AFTER or any(text.startswith(w, start) for w in _ZH_IDIOMS):
            continue
        if (before.isascii() and before.isalnum()) or before == "." or after in _ASCII_DIGITS:
            continue  # the result would merge with the digits or word beside it
        whole, _, frac = run.partition("点")
        percent = text.endswith("百分之", 0, start)
        lone = len(whole) == 1 and not frac and not percent
        if lone and (after not in _CLASSIFIERS or whole in _FINANCIAL):
            continue
        if len(whole) == 1 and whole in _UNITS and before in _APPROX_BEFORE_UNIT:
            continue
        value = parse_chinese(whole)
        if value is None:
            continue
        if frac:
            digits = "".join(str(_ZH_DIGITS[c]) for c in frac)
            value += Decimal(f"0.{digits}")
        replacement = _fmt(value)
        if percent:
            start, replacement = start - 3, replacement + "%"
        edits.append((start, end, replacement))
    return edits


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text)


_ONES = {w: i for i, w in enumerate(_words("one two three four five six seven eight nine"), 1)}
_TEENS = {
    w: i
    for i, w in enumerate(
        _words("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen"),
        10,
    )
}
_TENS = {
    w: 10 * i
    for i, w in enumerate(_words("twenty thirty forty fifty sixty seventy eighty ninety"), 2)
}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
# A lone "one" after these words, or before `_PRONOUN_AFTER`, is a pronoun.
_PRONOUN_BEFORE = frozenset(
    _words(
        "no any every some the this that which each only another such same last next other "
        "little right wrong by"
    )
)
_PRONOUN_AFTER = frozenset(_words("of another by or"))
_WORD = re.compile(r"[A-Za-z]+|[0-9]+")


class _English:
    """A cardinal read word by word; `feed` says whether the word continues it."""

    def __init__(self) -> None:
        self.total = 0
        self.chunk = 0
        self.last = "start"
        self.last_scale = 10**12

    def feed(self, word: str, following: str) -> bool:
        """Take `word` if it continues the number; `following` is the next word, lowercased."""
        w, last = word.lower(), self.last
        fresh = last in ("start", "hundred", "scale", "and")
        total, chunk, scale = self.total, self.chunk, self.last_scale
        if w == "zero":
            ok = last == "start"
        elif w == "a" or w.isdigit():
            ok = last == "start" and (following == "hundred" or following in _SCALES)
            chunk = 1 if w == "a" else int(w)
        elif w in _ONES:
            ok = fresh or last == "tens"
            chunk += _ONES[w]
        elif w in _TEENS or w in _TENS:
            ok = fresh
            chunk += _TEENS.get(w) or _TENS[w]
        elif w == "hundred":
            ok = last in ("ones", "teens", "tens", "a") and 0 < chunk < 100
            chunk *= 100
        elif w in _SCALES:
            ok = last in ("ones", "teens", "tens", "hundred", "a", "num") and chunk > 0
            ok = ok and _SCALES[w] < scale
            total, chunk, scale = total + chunk * _SCALES[w], 0, _SCALES[w]
        elif w == "and":
            ok = last in ("hundred", "scale") and (
                following in _ONES or following in _TEENS or following in _TENS
            )
        else:
            ok = False
        if ok:
            self.total, self.chunk, self.last_scale, self.last = total, chunk, scale, _kind(w)
        return ok

    @property
    def value(self) -> int:
        return self.total + self.chunk


def _kind(w: str) -> str:
    if w in _ONES:
        return "ones"
    if w in _TEENS:
        return "teens"
    if w in _TENS:
        return "tens"
    if w in _SCALES:
        return "scale"
    return {"a": "a", "hundred": "hundred", "and": "and", "zero": "zero"}.get(w, "num")


def parse_english(phrase: str) -> int | None:
    """The value of a whole English cardinal ("a hundred and thirty-seven"), or None."""
    words = re.split(r"\s+|-", phrase.strip())
    reader = _English()
    for i, w in enumerate(words):
        following = words[i + 1].lower() if i + 1 < len(words) else ""
        if not reader.feed(w, following):
            return None
    return reader.value if reader.last not in ("start", "a", "num", "and") else None


# Every edit holds one of these words as a whole token (a bare "a", "and" or
# digits never make a number alone): a text with none of them has no English
# numeral, and its words need not be read one by one.
_NUMBER_WORDS = sorted((*_ONES, *_TEENS, *_TENS, *_SCALES, "hundred", "zero"), key=len)[::-1]
_NUMBER_WORD = re.compile(r"(?<![A-Za-z])(?i:" + "|".join(_NUMBER_WORDS) + r")(?![A-Za-z])")


def _english_edits(text: str) -> list[tuple[int, int, str]]:
    if _NUMBER_WORD.search(text) is None:
        return []
    return _read_english(text)


def _read_english(text: str) -> list[tuple[int, int, str]]:
    """Every English numeral of `text`, read word by word."""
    words = list(_WORD.finditer(text))
    edits: list[tuple[int, int, str]] = []
    i = 0
    while i < len(words):
        reader = _English()
        j = i
        while j < len(words):
            if j > i and not re.fullmatch(r"\s+|-", text[words[j - 1].end() : words[j].start()]):
                break
            following = words[j + 1].group().lower() if j + 1 < len(words) else ""
            if not reader.feed(words[j].group(), following):
                break
            j += 1
        if reader.last == "and":
            j -= 1  # "and" followed by something else belongs to the sentence
        if reader.last in ("start", "a", "num"):
            i += 1
            continue
        if not _english_context_blocks(text, words, i, j):
            edits.append((words[i].start(), words[j - 1].end(), str(reader.value)))
        i = j
    return edits


def _english_context_blocks(text: str, words: list[re.Match[str]], i: int, j: int) -> bool:
    """Whether words[i:j], a valid number, is part of something else here."""
    start, end = words[i].start(), words[j - 1].end()
    before, after = text[start - 1 : start], text[end : end + 1]
    if before.isalnum() or before in ("_", ".") or after.isalnum() or after == "_":
        return True
    if before == "-" and text[start - 2 : start - 1].isalnum():
        return True  # "A-one"
    if after == "-" and text[end + 1 : end + 2].isalnum():
        return True  # "one-off", "fourteen-day"
    if j - i == 1 and words[i].group().lower() == "one":
        # Only a word beside it, not one across punctuation ("No, one project").
        spaced_before = i > 0 and text[words[i - 1].end() : start].isspace()
        spaced_after = j < len(words) and text[end : words[j].start()].isspace()
        prev = words[i - 1].group().lower() if spaced_before else ""
        nxt = words[j].group().lower() if spaced_after else ""
        if prev in _PRONOUN_BEFORE or nxt in _PRONOUN_AFTER or after in ("'", "’"):
            return True
    return False


def rewrite_numerals(text: str) -> Rewritten:
    """`text` with Chinese and English numerals (see the module rules) as Arabic digits."""
    # Row labels and short texts recur (every answer over the same rows reads
    # them again): short ones are remembered; the result is immutable.
    if len(text) <= _SHORT:
        return _rewrite_short(text)
    return _rewrite(text)


_SHORT = 128


def _rewrite(text: str) -> Rewritten:
    narrow = text.translate(_WIDTH)
    edits = sorted(_chinese_edits(narrow) + _english_edits(narrow))
    parts: list[str] = []
    placed: list[tuple[int, int, int, int]] = []
    pos = new = 0
    for start, end, replacement in edits:
        if start < pos:
            continue  # overlapping candidates: the first wins
        parts.append(narrow[pos:start])
        new += start - pos
        parts.append(replacement)
        placed.append((start, end, new, new + len(replacement)))
        new += len(replacement)
        pos = end
    parts.append(narrow[pos:])
    return Rewritten(original=text, text="".join(parts), edits=tuple(placed))


_rewrite_short = lru_cache(maxsize=4096)(_rewrite)


def to_digits(text: str) -> str:
    """Shorthand for `rewrite_numerals(text).text`."""
    return rewrite_numerals(text).text
