"""Elementwise string rewriting: StringLower, StringUpper, StringStrip, RegexFullMatch,
StaticRegexFullMatch, RegexReplace, StaticRegexReplace.

TensorFlow's regex ops use RE2. Here patterns run on Python's `re` over the UTF-8 text
(so `.` is one character, as in RE2). RE2 and `re` agree on the common syntax; a pattern
using what RE2 rejects (lookaround, backreferences) fails as it does in TensorFlow, and
RE2-only syntax that `re` lacks (`\\pN` classes, `\\Q...\\E`, `\\C`, POSIX `[[:alpha:]]`)
raises an InvalidArgumentError naming the unsupported construct.
"""
from __future__ import annotations

import functools
import re
from typing import Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import REQUIRED, kernel, not_differentiable, register_op


def _invalid(ctx, message):
    return errors.InvalidArgumentError(None, ctx.op, message)


def _map_strings(x: np.ndarray, fn) -> np.ndarray:
    out = np.empty(x.size, dtype=object)
    out[:] = [fn(s) for s in x.reshape(-1).tolist()]
    return out.reshape(x.shape)


def _same_shape(op):
    return op.inputs[0].shape


def _scalar_input(op, i: int):
    op.inputs[i].shape.with_rank(0)


# --- StringLower, StringUpper, StringStrip --------------------------------------------------
def _case_kernel(lower: bool):
    def body(ctx, x):
        encoding = ctx.attrs["encoding"]
        if encoding == "":
            # ASCII letters only, bytes untouched otherwise (absl::AsciiStrToLower)
            return _map_strings(x, bytes.lower if lower else bytes.upper)
        if encoding != "utf-8":  # TF's kernel takes exactly these two spellings
            raise _invalid(ctx, "only utf-8 or '' (no encoding) is supported, received %s"
                           % encoding)

        def convert(s: bytes) -> bytes:
            # invalid UTF-8 becomes U+FFFD, as ICU's UnicodeString::fromUTF8 in TF
            text = s.decode("utf-8", "replace")
            return (text.lower() if lower else text.upper()).encode("utf-8")
        return _map_strings(x, convert)
    return body


for _op_type, _lower in (("StringLower", True), ("StringUpper", False)):
    register_op(_op_type, inputs=["input: string"], outputs=["output: string"],
                attrs={"encoding": ""}, shape=_same_shape)
    kernel(_op_type)(_case_kernel(_lower))
    not_differentiable(_op_type)

register_op("StringStrip", inputs=["input: string"], outputs=["output: string"],
            shape=_same_shape)
not_differentiable("StringStrip")


@kernel("StringStrip")
def _strip_kernel(ctx, x):
    return _map_strings(x, bytes.strip)  # ASCII whitespace, as absl::StripAsciiWhitespace


def _change_case(op_type: str, input, encoding: str, name) -> Tensor:  # noqa: A002
    """StringLower or StringUpper of `input`; `encoding` is "" or "utf-8" (others fail
    at run time, as in TF)."""
    return apply_op(op_type, [input],
                    {"encoding": encoding}, name=name or op_type).outputs[0]


@tf_export("strings.lower")
def lower(input, encoding: str = "", name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Lowercases each string (TF1 `tf.strings.lower`).

    Args:
      input: a string Tensor.
      encoding: "" (ASCII letters only) or "utf-8" (every letter, Unicode rules).
      name: op name.

    Returns:
      A string Tensor of the shape of `input`.
    """
    return _change_case("StringLower", input, encoding, name)


@tf_export("strings.upper")
def upper(input, encoding: str = "", name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Uppercases each string (TF1 `tf.strings.upper`); "utf-8" uses full Unicode case
    mapping ("ß" becomes "SS").

    Args:
      input: a string Tensor.
      encoding: "" (ASCII letters only) or "utf-8".
      name: op name.

    Returns:
      A string Tensor of the shape of `input`.
    """
    return _change_case("StringUpper", input, encoding, name)


@tf_export("strings.strip", "string_strip")
def strip(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Removes leading and trailing ASCII whitespace from each string (TF1).

    Args:
      input: a string Tensor.
      name: op name.

    Returns:
      A string Tensor of the shape of `input`.
    """
    return apply_op("StringStrip", [input],
                    name=name or "StringStrip").outputs[0]


# --- RE2 patterns on Python's re ------------------------------------------------------------
class _PatternError(ValueError):
    pass


@functools.lru_cache(maxsize=1)
def _syntax_checks():
    """(RE2-only syntax that `re` reads differently or not at all, what `re` accepts but
    RE2 rejects with RE2's words for it); compiled on first use, not at import."""
    re2_only = ((re.compile(r"(?<!\\)(?:\\\\)*\\[pP]"), "Unicode classes \\p / \\P"),
                (re.compile(r"(?<!\\)(?:\\\\)*\\[QE]"), "\\Q...\\E literal quoting"),
                (re.compile(r"(?<!\\)(?:\\\\)*\\C"), "\\C (any byte)"),
                (re.compile(r"\[\[:\^?[a-z]+:\]"), "POSIX classes like [[:alpha:]]"))
    re2_rejects = ((re.compile(r"\(\?<?[=!]"), "invalid perl operator: %s"),
                   (re.compile(r"(?<!\\)(?:\\\\)*\\[1-9]"), "invalid escape sequence: %s"))
    return re2_only, re2_rejects


@functools.lru_cache(maxsize=256)
def _compile(pattern: bytes) -> "re.Pattern":
    text = pattern.decode("utf-8", "surrogateescape")
    re2_only, re2_rejects = _syntax_checks()
    for finder, what in re2_only:
        if finder.search(text):
            raise _PatternError("tensorweave runs RE2 patterns on Python's re, which does "
                                "not support %s (in %r)" % (what, text))
    for finder, what in re2_rejects:
        m = finder.search(text)
        if m:
            raise _PatternError("Invalid pattern: %s, error: %s"
                                % (text, what % m.group(0).lstrip("\\")[-3:]))
    # RE2's \z (end of text) is re's \Z
    text = re.sub(r"(?<!\\)((?:\\\\)*)\\z", r"\1\\Z", text)
    try:
        return re.compile(text)
    except re.error as e:
        raise _PatternError("Invalid pattern: %s, error: %s" % (text, e)) from None


def _pattern(ctx, pattern) -> "re.Pattern":
    if isinstance(pattern, np.ndarray):
        if pattern.ndim != 0:
            raise _invalid(ctx, "Pattern must be scalar, but received %s"
                           % list(pattern.shape))
        pattern = pattern[()]
    if isinstance(pattern, str):
        pattern = pattern.encode("utf-8")
    try:
        return _compile(bytes(pattern))
    except _PatternError as e:
        raise _invalid(ctx, str(e)) from None


def _text(s: bytes) -> str:
    return s.decode("utf-8", "surrogateescape")


def _bytes(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def _full_match(ctx, x, pattern):
    compiled = _pattern(ctx, pattern)
    flat = [compiled.fullmatch(_text(s)) is not None for s in x.reshape(-1).tolist()]
    return np.asarray(flat, dtype=bool).reshape(x.shape)


register_op("RegexFullMatch", inputs=["input: string", "pattern: string"],
            outputs=["output: bool"],
            shape=lambda op: (_scalar_input(op, 1), op.inputs[0].shape)[1])
register_op("StaticRegexFullMatch", inputs=["input: string"], outputs=["output: bool"],
            attrs={"pattern": REQUIRED}, shape=_same_shape)
not_differentiable("RegexFullMatch")
not_differentiable("StaticRegexFullMatch")


@kernel("RegexFullMatch")
def _regex_full_match_kernel(ctx, x, pattern):
    return _full_match(ctx, x, pattern)


@kernel("StaticRegexFullMatch")
def _static_regex_full_match_kernel(ctx, x):
    return _full_match(ctx, x, ctx.attrs["pattern"])


@tf_export("strings.regex_full_match")
def regex_full_match(input, pattern, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Whether each whole string matches the RE2 `pattern` (TF1).

    Args:
      input: a string Tensor.
      pattern: a scalar string (a Python string builds the static form of the op).
      name: op name.

    Returns:
      A bool Tensor of the shape of `input`.

    Raises:
      InvalidArgumentError (at run time): an invalid pattern.
    """
    if isinstance(pattern, (str, bytes)):
        text = pattern.decode("utf-8") if isinstance(pattern, bytes) else pattern
        return apply_op("StaticRegexFullMatch", [input], {"pattern": text},
                        name=name or "StaticRegexFullMatch").outputs[0]
    return apply_op("RegexFullMatch", [input, pattern],
                    name=name or "RegexFullMatch").outputs[0]


# --- RegexReplace ---------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _rewrite(rewrite: bytes, groups: int):
    """RE2's rewrite string as a function of a match: \\0-\\9 are groups, \\\\ is a
    backslash; any other escape, or a group the pattern lacks, is an error."""
    text = _text(rewrite)
    parts = []  # literal strings and group numbers
    i = 0
    literal = []
    while i < len(text):
        c = text[i]
        if c != "\\":
            literal.append(c)
            i += 1
            continue
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if nxt == "\\":
            literal.append("\\")
        elif nxt.isdigit():
            if int(nxt) > groups:
                raise _PatternError("Rewrite schema requests %d matches, but the regexp only "
                                    "has %d parenthesized subexpressions." % (int(nxt), groups))
            parts.append("".join(literal))
            literal = []
            parts.append(int(nxt))
        else:
            raise _PatternError("invalid rewrite pattern: %s" % text)
        i += 2
    parts.append("".join(literal))

    def apply(m) -> str:
        return "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts)
    # the same rewrite as a template of Python's re (its escapes doubled, groups as
    # \g<n>; a group that did not take part is empty in both)
    template = "".join(p.replace("\\", "\\\\") if isinstance(p, str) else "\\g<%d>" % p
                       for p in parts)
    return apply, template


@functools.lru_cache(maxsize=256)
def _never_empty(compiled) -> bool:
    """Whether every match of `compiled` is non-empty: then Python's re.sub replaces
    exactly what RE2 does (they differ only at empty matches)."""
    try:
        from re import _parser  # the parser re.compile uses (Python 3.11+)
    except ImportError:
        import sre_parse as _parser
    try:
        return _parser.parse(compiled.pattern, compiled.flags).getwidth()[0] > 0
    except Exception:  # an internal API: when it cannot say, take the exact path
        return False


def _replace(ctx, x, pattern, rewrite):
    compiled = _pattern(ctx, pattern)
    if isinstance(rewrite, np.ndarray):
        if rewrite.ndim != 0:
            raise _invalid(ctx, "Rewrite must be scalar, but received %s"
                           % list(rewrite.shape))
        rewrite = rewrite[()]
    if isinstance(rewrite, str):
        rewrite = rewrite.encode("utf-8")
    try:
        fn, template = _rewrite(bytes(rewrite), compiled.groups)
    except _PatternError as e:
        raise _invalid(ctx, str(e)) from None
    count = 0 if ctx.attrs["replace_global"] else 1
    if _never_empty(compiled):  # re.sub's C loop, about 7x faster than matching in Python
        return _map_strings(x, lambda s: _bytes(compiled.sub(template, _text(s), count)))
    return _map_strings(x, lambda s: _bytes(_re2_sub(compiled, fn, _text(s), count)))


def _re2_sub(compiled, fn, text: str, count: int) -> str:
    """`compiled.sub(fn, text, count)` with RE2's (TF's) rule for empty matches: none
    right where the previous match ended ('a*' replaces "aaa" once, Python's re twice)."""
    out, pos, last_end, done = [], 0, -1, 0
    for m in compiled.finditer(text):
        if count and done >= count:
            break
        if m.start() == m.end() == last_end:
            continue
        out.append(text[pos:m.start()])
        out.append(fn(m))
        pos = last_end = m.end()
        done += 1
    out.append(text[pos:])
    return "".join(out)


register_op("RegexReplace", inputs=["input: string", "pattern: string", "rewrite: string"],
            outputs=["output: string"], attrs={"replace_global": True},
            shape=lambda op: (_scalar_input(op, 1), _scalar_input(op, 2),
                              op.inputs[0].shape)[2])
register_op("StaticRegexReplace", inputs=["input: string"], outputs=["output: string"],
            attrs={"pattern": REQUIRED, "rewrite": REQUIRED, "replace_global": True},
            shape=_same_shape)
not_differentiable("RegexReplace")
not_differentiable("StaticRegexReplace")


@kernel("RegexReplace")
def _regex_replace_kernel(ctx, x, pattern, rewrite):
    return _replace(ctx, x, pattern, rewrite)


@kernel("StaticRegexReplace")
def _static_regex_replace_kernel(ctx, x):
    return _replace(ctx, x, ctx.attrs["pattern"], ctx.attrs["rewrite"])


@tf_export("regex_replace", "strings.regex_replace")
def regex_replace(input, pattern, rewrite, replace_global: bool = True,  # noqa: A002
                  name: Optional[str] = None) -> Tensor:
    """Replaces the matches of the RE2 `pattern` in each string by `rewrite` (TF1).

    Args:
      input: a string Tensor.
      pattern: a scalar string, the RE2 pattern.
      rewrite: a scalar string; `\\0` is the whole match, `\\1`-`\\9` its groups,
        `\\\\` a backslash.
      replace_global: replace every match (True) or only the first.
      name: op name.

    Returns:
      A string Tensor of the shape of `input`. With Python strings for both `pattern`
      and `rewrite` the op is StaticRegexReplace, else RegexReplace.

    Raises:
      InvalidArgumentError (at run time): an invalid pattern or rewrite.
    """
    if isinstance(pattern, (str, bytes)) and isinstance(rewrite, (str, bytes)):
        def as_str(v):
            return v.decode("utf-8") if isinstance(v, bytes) else v
        return apply_op("StaticRegexReplace", [input],
                        {"pattern": as_str(pattern), "rewrite": as_str(rewrite),
                         "replace_global": bool(replace_global)},
                        name=name or "StaticRegexReplace").outputs[0]
    return apply_op("RegexReplace", [input, pattern, rewrite],
                    {"replace_global": bool(replace_global)},
                    name=name or "RegexReplace").outputs[0]

