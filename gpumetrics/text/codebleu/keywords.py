"""Keyword lists of the ten CodeBLEU languages (the weighted n-gram match gives a keyword weight 1, any other token
0.2 — 5:1, as the paper has it).

The words are those of codebleu 0.7.0's ``keywords/<lang>.txt`` files (a keyword is a whitespace token equal to one
of them; case matters), kept here as data so that codebleu is no run-time dependency; a test checks them against the
installed files. ``AIJ2021_PYTHON`` is the 35-word list of the AIJ-2021 Code2code script (Python 3.7–3.11's
``keyword.kwlist``; codebleu 0.7 added the soft keywords ``match``, ``case`` and ``type``).
"""

from __future__ import annotations

import types


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: language → keywords (codebleu 0.7.0)
KEYWORDS: types.MappingProxyType = types.MappingProxyType({
    "c": _words(
        "auto else long switch break enum register typedef case extern return union char float short unsigned "
        "const for signed void continue goto sizeof volatile default if static while do int struct _Packed "
        "double "
    ),
    "c_sharp": _words(
        "abstract as base bool break byte case catch char checked class const continue decimal default "
        "delegate do double else enum event explicit extern false finally fixed float for foreach goto if "
        "implicit in int interface internal is lock long namespace new null object operator out override "
        "params private protected public readonly ref return sbyte sealed short sizeof stackalloc static "
        "string struct switch this throw true try typeof uint ulong unchecked unsafe ushort using virtual "
        "void volatile while add alias ascending async await by descending dynamic equals from get global "
        "group into join let nameof notnull on orderby partial remove select set unmanaged value var when "
        "where yield "
    ),
    "cpp": _words(
        "auto const double float int short struct unsigned break continue else for long signed switch void "
        "case default enum goto register sizeof typedef volatile char do extern if return static union while "
        "asm dynamic_cast namespace reinterpret_cast bool explicit new static_cast typeid catch false try "
        "operator template typename class friend private this using const_cast inline public throw virtual "
        "delete mutable protected true wchar_t and bitand compl not_eq or_eq xor_eq and_eq bitor not or xor "
        "cin endl INT_MIN iomanip main npos std cout include INT_MAX iostream MAX_RAND NULL string "
    ),
    "go": _words(
        "break default func interface select case defer go map struct chan else goto package switch const "
        "fallthrough if range type continue for import return var false true "
    ),
    "java": _words(
        "abstract assert boolean break byte case catch char class const continue default do double else enum "
        "extends final finally float for goto if implements import instanceof int interface long native new "
        "package private protected public return short static strictfp super switch synchronized this throw "
        "throws transient try void volatile while "
    ),
    "javascript": _words(
        "await break case catch class const continue debugger default delete do else enum export extends "
        "false finally for function if implements import in instanceof interface let new null package private "
        "protected public return super switch static this throw try True typeof var void while with yield "
    ),
    "php": _words(
        "__halt_compiler abstract and array as break callable case catch class clone const continue declare "
        "default die do echo else elseif empty enddeclare endfor endforeach endif endswitch endwhile eval "
        "exit extends final for foreach function global goto if implements include include_once instanceof "
        "insteadof interface isset list namespace new or print private protected public require require_once "
        "return static switch throw trait try unset use var while xor "
    ),
    "python": _words(
        "False None True and as assert async await break class continue def del elif else except finally for "
        "from global if import in is lambda nonlocal not or pass raise return try while with yield match case "
        "type "
    ),
    "ruby": _words(
        "__ENCODING__ __LINE__ __FILE__ BEGIN END alias and begin break case class def defined? do else elsif "
        "end ensure false for if in module next nil not or redo rescue retry return self super then true "
        "undef unless until when while yield "
    ),
    "rust": _words(
        "as async await block bool break char const continue crate default dyn else enum expr extern f32 f64 "
        "false fn for i128 i16 i32 i64 i8 ident if impl in isize item let lifetime literal loop macro_rules! "
        "match meta mod move mut pat path pub ref return self static stmt str struct super trait true tt ty "
        "type u128 u16 u32 u64 u8 union unsafe use usize vis where while yield "
    ),
})

#: the Python list of the AIJ-2021 Code2code script (keywords/python.txt there)
AIJ2021_PYTHON = _words(
    "False None True and as assert async await break class continue def del elif else except finally for "
    "from global if import in is lambda nonlocal not or pass raise return try while with yield "
)
