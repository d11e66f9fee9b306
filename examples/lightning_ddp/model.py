"""A LightningModule whose validation loop scores generated text with several gpumetrics metrics.

The "model" is a word-by-word German → English glossary, so the example needs no download and every run produces the
same translations; replace :meth:`GlossTranslator.translate` with your model's decoding.
"""

from __future__ import annotations

import re

import lightning as L
import torch
from torchmetrics import MetricCollection

import gpumetrics

#: German word (lowercase) → English; "" drops the word. Words not listed (names, numbers, symbols) are copied.
LEXICON = {
    "acht": "eight", "beträgt": "amounts", "bruder": "brother", "café": "café", "das": "the", "den": "the",
    "der": "the", "die": "the", "du": "you", "er": "he", "es": "it", "fahren": "drive", "gesagt": "said",
    "gestern": "yesterday", "groß": "big", "habe": "have", "hat": "has", "haus": "house", "helfen": "help",
    "ich": "I", "in": "in", "ist": "is", "japanisch": "Japanese", "kaffee": "coffee", "kannst": "can",
    "keinen": "no", "mein": "my", "mir": "me", "morgen": "tomorrow", "nach": "to", "nass": "wet", "öffnet": "opens",
    "preis": "price", "regnet": "rains", "sie": "she", "spricht": "speaks", "straße": "street", "strömen": "streams",
    "trinkt": "drinks", "uhr": "o'clock", "um": "at", "verpasst": "missed", "wir": "we", "wohnt": "lives",
    "zug": "train", "ähm": "",
}
WORD_AND_PUNCTUATION = re.compile(r"^(.*?)([.,:;!?…]*)$")


def gloss(source: str, lexicon: dict[str, str] = LEXICON) -> str:
    """Translate word by word, keeping each word's trailing punctuation; capitalise the first letter."""
    words = []
    for token in source.split():
        word, punctuation = WORD_AND_PUNCTUATION.match(token).groups()
        translated = lexicon.get(word.lower(), word)
        if translated:  # a dropped word takes its punctuation with it
            words.append(translated + punctuation)
    text = " ".join(words)
    return text[:1].upper() + text[1:]


class GlossTranslator(L.LightningModule):
    """Validation only: translate each batch, update the metrics, let Lightning compute and reset them per epoch.

    Metrics are attributes (so they move with the module to its device); each ``compute()`` reduces its own states
    across the DDP ranks, so metric objects are logged without ``sync_dist``.
    """

    def __init__(self) -> None:
        super().__init__()
        # scalar metrics: logged as metric objects, computed by Lightning at the end of the epoch
        self.val_metrics = MetricCollection(
            {
                "cer": gpumetrics.CharErrorRate(),
                "bleu": gpumetrics.BLEUScore(mode="sacrebleu"),
                "cider": gpumetrics.CIDErScore(),
                "token_f1": gpumetrics.TokenF1(preset="squad"),
                "exact_match": gpumetrics.ExactMatch(preset="squad"),
            },
            prefix="val_",
            compute_groups=False,  # the metrics' states differ; no need to look for shared ones
        )
        # ROUGE returns a dict of scores, which Lightning cannot log as one metric: computed in the epoch-end hook
        self.val_rouge = gpumetrics.ROUGEScore(rouge_keys=("rouge1", "rougeL"))
        self.samples_seen = 0
        self.samples_per_rank: list[int] = []

    def translate(self, sources: list[str]) -> list[str]:
        return [gloss(source) for source in sources]

    def validation_step(self, batch: dict[str, list], batch_idx: int) -> None:
        preds, target = self.translate(batch["source"]), batch["references"]
        self.val_metrics.update(preds, target)
        self.log_dict(self.val_metrics, on_step=False, on_epoch=True, batch_size=len(preds))
        self.val_rouge.update(preds, target)
        self.samples_seen += len(preds)

    def on_validation_epoch_start(self) -> None:
        self.samples_seen = 0

    def on_validation_epoch_end(self) -> None:
        # compute() already reduces every rank's states, so each rank holds the same corpus value; sync_dist=True
        # only averages these equal values (and tells Lightning the value is a cross-rank one, so it does not warn)
        self.log_dict({f"val_{key}": value for key, value in self.val_rouge.compute().items()}, sync_dist=True)
        self.val_rouge.reset()
        # how many samples each rank scored: the shards must add up to the data set, with no sample repeated
        self.samples_per_rank = self.all_gather(torch.tensor(self.samples_seen)).reshape(-1).tolist()
