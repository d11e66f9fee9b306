"""Character tables of the PTB tokenizer port (gpumetrics.text.tokenize.ptb), measured on pycocoevalcap's Java tool.

Stanford CoreNLP 3.4.1's lexer classifies characters with its own (old) Unicode tables, not Python's. These sets were
obtained black-box: every BMP code point ``c`` was fed to the Java tool as ``"a c b"`` and ``"acb"`` and the output
compared with the port; ``tests/text/test_ptb_tokenizer.py`` re-checks a seeded random sample against the Java tool.
"""

from __future__ import annotations


def _parse(ranges: str) -> frozenset[int]:
    codes: set[int] = set()
    for item in ranges.split():
        first, _, last = item.partition("-")
        codes.update(range(int(first, 16), int(last or first, 16) + 1))
    return frozenset(codes)


# Characters the Java tool deletes ("Untokenizable" warnings, or unknown to its tables: private use, unassigned,
# letters/marks/symbols added to Unicode after its tables were made, controls, format characters). A deleted
# character still ends the token before it: "a\x00b" gives "a", "b".
DELETED = _parse("""
0-8 e-1b 7f 81-84 86-9f 37f-383 38b 38d 3a2 482 488-489 528-530 557-558 560 588 58b-590 5c8-5cf 5eb-5ef 5f5-5ff
604-605 60d-613 61c-61d 65f 66b-66c 70e 7b2-7bf 7f9 7fb-7ff 816-819 81b-823 825-827 829-83f 859-89f 8a1 8ad-8ff
93a-93b 94f 956-957 970 978 980 984 98d-98e 991-992 9a9 9b1 9b3-9b5 9ba-9bb 9c5-9c6 9c9-9ca 9cf-9d6 9d8-9db 9de
9e4-9e5 9f2-a00 a04 a0b-a0e a11-a12 a29 a31 a34 a37 a3a-a3b a3d a50-a58 a5d a5f-a65 a70-a71 a75-a80 a84 a8e a92
aa9 ab1 ab4 aba-abb ad1-adf ae2-ae5 af0-b04 b0d-b0e b11-b12 b29 b31 b34 b3a-b3c b3e-b5b b5e b62-b65 b70 b72-b81
b84 b8b-b8d b91 b96-b98 b9b b9d ba0-ba2 ba5-ba7 bab-bad bba-bbd bc3-bc5 bc9 bce-bcf bd1-be5 bf0-c00 c04 c0d c11
c29 c34 c3a-c3c c57 c5a-c5f c62-c65 c70-c84 c8d c91 ca9 cb4 cba-cbc cbe-cdd cdf ce2-ce5 cf0 cf3-d04 d0d d11
d3b-d3c d45 d49-d4d d4f-d5f d62-d65 d70-d79 d80-d84 d97-d99 db2 dbc dbe-dbf dc7-e00 e3b-e3e e5a-e80 e83 e85-e86
e89 e8b-e8c e8e-e93 e98 ea0 ea4 ea6 ea8-ea9 eac ebe-ebf ec5 ec7 ece-ecf eda-edb ee0-eff f01-f1f f2a-f3f f48
f6d-f87 f8d-fff 102b-103e 104a-104f 1056-1059 105e-1060 1062-1064 1067-106d 1071-1074 1082-108d 108f 109a-109f
10c6 10c8-10cc 10ce-10cf 10fb 1249 124e-124f 1257 1259 125e-125f 1289 128e-128f 12b1 12b6-12b7 12bf 12c1
12c6-12c7 12d7 1311 1316-1317 135b-137f 1390-139f 13f5-1400 166d-166e 169b-169f 16eb-16ff 170d 1712-171f
1732-173f 1752-175f 176d 1771-177f 17b4-17d6 17d8-17db 17dd-17df 17ea-180f 181a-181f 1878-187f 18a9 18ab-18af
18f6-18ff 191d-1945 196e-196f 1975-197f 19ac-19c0 19c8-19cf 19da-19ff 1a17-1a1f 1a55-1a7f 1a8a-1a8f 1a9a-1aa6
1aa8-1b04 1b34-1b44 1b4c-1b4f 1b5a-1b82 1ba1-1bad 1be6-1bff 1c24-1c3f 1c4a-1c4c 1c7e-1ce8 1ced 1cf2-1cf4
1cf7-1cff 1dc0-1dff 1f16-1f17 1f1e-1f1f 1f46-1f47 1f4e-1f4f 1f58 1f5a 1f5c 1f5e 1f7e-1f7f 1fb5 1fbf-1fc1 1fc5
1fcd-1fcf 1fd4-1fd5 1fdc-1fdf 1fed-1ff1 1ff5 1ffd-1fff 200c-200f 2012 201b 2024-2025 2027 202a-202e 203c-203d
2043 2045-205e 2060-206f 2072-2073 208f 209d-209f 20a1-20a3 20a5-20ab 20ad-20ff 2150-2152 215f-2182 2185-218f
2c2f 2c5f 2ce5-2cea 2cef-2cf1 2cf4-2cff 2d26 2d28-2d2c 2d2e-2d2f 2d68-2d6e 2d70-2d7f 2d97-2d9f 2da7 2daf 2db7
2dbf 2dc7 2dcf 2dd7 2ddf-2e2e 2e30-2fff 3003-3004 3007-3011 3013-3030 3036-303a 303d-3040 3097-309c 30a0
3100-3104 312e-3130 318f-319f 31bb-31ef 3200-33ff 4db6-4dff 9fcd-9fff a48d-a4cf a4fe-a4ff a60d-a60f a62c-a63f
a66f-a67e a698-a69f a6e6-a716 a720-a721 a789-a78a a78f a794-a79f a7ab-a7f7 a802 a806 a80b a823-a83f a874-a881
a8b4-a8cf a8da-a8f1 a8f8-a8fa a8fc-a8ff a926-a92f a947-a95f a97d-a983 a9b3-a9ce a9da-a9ff aa29-aa3f aa43
aa4c-aa4f aa5a-aa5f aa77-aa79 aa7b-aa7f aab0 aab2-aab4 aab7-aab8 aabe-aabf aac1 aac3-aada aade-aadf aaeb-aaf1
aaf5-ab00 ab07-ab08 ab0f-ab10 ab17-ab1f ab27 ab2f-abbf abe3-abef abfa-abff d7a4-d7af d7c7-d7ca d7fc-d7ff
e000-f8ff fa6e-fa6f fada-faff fb07-fb12 fb18-fb1c fb1e fb29 fb37 fb3d fb3f fb42 fb45 fbb2-fbd2 fd3e-fd4f
fd90-fd91 fdc8-fdef fdfc-fe6f fe75 fefd-ff00 ffbf-ffc1 ffc8-ffc9 ffd0-ffd1 ffd8-ffd9 ffdd-ffdf ffe2-ffe4
ffe7-ffff
""")

# Word characters for the Java tool that Python's ``\w`` (plus combining marks) leaves out: "a\u02c2b" is one token.
WORD_EXTRA = _parse("""
2c2-2c5 2d2-2df 2e5-2eb 2ed 2ef-2ff 375 378-379 384-385 3f6 55a-55f 6dd-6de 6e9 6fd-6fe 70f 74b-74c a43-a46 a49-a4a
a4e-a4f ac6 aca ace-acf c45 c49 c4e-c54
""")

# Python word characters that the Java tool splits off as tokens of their own (superscript/subscript digits, circled
# and vulgar-fraction numbers …): "a²b" gives "a", "²", "b".
NOT_WORD = _parse("""
b2-b3 b9 614 2070 2074-2079 2080-2089 2155-215e 2460-249b 24ea-24ff 2776-2793
""")
