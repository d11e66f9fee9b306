"""FID: Fréchet distance at d = 2048 vs pytorch-fid (scipy sqrtm) and torchmetrics; FID update vs the raw forward."""

from __future__ import annotations

import warnings
from pathlib import Path

import torch
from torchmetrics.image.fid import FrechetInceptionDistance as TorchmetricsFID
from torchmetrics.image.fid import _compute_fid

from benchmarks.ddp_sync import IdentityFeatures
from benchmarks.registry import Contenders, register
from gpumetrics.image.fid import FrechetInceptionDistance, feature_statistics, frechet_distance
from gpumetrics.image.inception import FIDInceptionV3, random_fid_inception_state_dict
from testkit.pytorch_fid_scipy import pytorch_fid_frechet_distance


def _inception_like_stats(d: int, n: int, seed: int, shift: float):
    """Mean/covariance of ``n`` non-negative correlated features (full rank when n > d), like pool3 activations."""
    generator = torch.Generator().manual_seed(seed)
    mixing = torch.randn(d, d, generator=generator, dtype=torch.float64) / d**0.5
    features = (torch.randn(n, d, generator=generator, dtype=torch.float64) @ mixing).abs() + shift
    return feature_statistics(features)


@register("frechet_distance", sizes=(2048,), quick_sizes=(256,), unit="dims", repeats=3)
def frechet_distance_case(size: int, device: str) -> Contenders:
    mu1, sigma1 = _inception_like_stats(size, 2 * size, seed=0, shift=0.0)
    mu2, sigma2 = _inception_like_stats(size, 2 * size, seed=1, shift=0.05)
    on_device = [t.to(device) for t in (mu1, sigma1, mu2, sigma2)]
    as_numpy = [t.numpy() for t in (mu1, sigma1, mu2, sigma2)]

    def pytorch_fid():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SciPy 1.16–1.17's deprecation of sqrtm(disp=...)
            return pytorch_fid_frechet_distance(*as_numpy)

    return Contenders(
        ours={"frechet_distance (float64, Cholesky + eigvalsh)": lambda: float(frechet_distance(*on_device))},
        anchors={
            "pytorch-fid calculate_frechet_distance (scipy sqrtm)": pytorch_fid,
            "torchmetrics _compute_fid (float64, eigvals)": lambda: float(_compute_fid(*on_device)),
        },
        check=lambda ours, anchor: abs(ours - anchor) <= 1e-6 * abs(anchor),
        note="full-rank covariances from 2·d samples; result within 1e-6 relative of scipy",
    )


class _RandomInception(torch.nn.Module):
    """The same random-weight FID Inception for every contender (torchmetrics accepts it as a custom extractor)."""

    def __init__(self, state: dict) -> None:
        super().__init__()
        self.net = FIDInceptionV3(dims=2048, weights=state)
        self.dims = 2048
        self.num_features = 2048

    def forward(self, images):
        return self.net(images)


@register("fid_update", sizes=(32,), quick_sizes=(2,), unit="images", repeats=3)
def fid_update_case(size: int, device: str) -> Contenders:
    state = random_fid_inception_state_dict(seed=0)
    extractor = _RandomInception(state).to(device)
    generator = torch.Generator().manual_seed(0)
    images = torch.rand(size, 3, 256, 256, generator=generator).to(device)
    ours = FrechetInceptionDistance(feature=extractor).to(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = TorchmetricsFID(feature=extractor, normalize=True).to(device)

    def raw_forward():
        with torch.no_grad():
            return extractor(images)

    return Contenders(
        ours={"FrechetInceptionDistance.update": lambda: ours.update(images, real=True)},
        anchors={
            "raw FIDInceptionV3 forward (no metric)": raw_forward,
            "torchmetrics FrechetInceptionDistance.update (same extractor)": lambda: theirs.update(images, real=True),
        },
        note="random-weight pytorch-fid Inception, 256×256 inputs resized to 299; ratio ≈ 1 is the goal",
    )


@register("clip_score_update", sizes=(8,), quick_sizes=(2,), unit="images", repeats=3)
def clip_score_update_case(size: int, device: str) -> Contenders:
    from gpumetrics.image.clip_score import CLIPScore

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metric = CLIPScore("open_clip", "ViT-B-32", pretrained="random").to(device)
    encoder = metric.encoder
    generator = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (size, 3, 256, 256), dtype=torch.uint8, generator=generator).to(device)
    captions = [f"a photo number {i} of a cat on a sofa" for i in range(size)]

    import open_clip

    open_clip_tokenizer = open_clip.get_tokenizer("ViT-B-32")

    def raw_encoders():
        with torch.no_grad():
            pixels = encoder.preprocess(images)
            tokens = open_clip_tokenizer(captions).to(device)
            return encoder.model.encode_image(pixels), encoder.model.encode_text(tokens)

    return Contenders(
        ours={"CLIPScore.update (open_clip ViT-B-32)": lambda: metric.update(images, captions)},
        anchors={"raw open_clip encode_image + encode_text (same preprocessing)": raw_encoders},
        note="random-weight ViT-B-32, 256×256 uint8 inputs; the anchor tokenises with open_clip's tokenizer; ratio ≈ 1 "
             "is the goal (metric overhead only)",
    )


@register("clip_score_vs_torchmetrics", sizes=(16,), quick_sizes=(2,), unit="images", repeats=5)
def clip_score_vs_torchmetrics_case(size: int, device: str) -> Contenders:
    """Both libraries on one random-weight hf CLIP of ViT-B/32's architecture, saved to disk and loaded by each."""
    import atexit
    import shutil
    import tempfile

    from torchmetrics.multimodal.clip_score import CLIPScore as TorchmetricsCLIPScore
    from transformers import CLIPModel, CLIPProcessor

    from gpumetrics.image.clip_score import CLIPScore
    from testkit.clip_models import VIT_B_32, TensorFeatures, save_random_hf_clip

    folder = Path(tempfile.mkdtemp(prefix="gpumetrics_bench_clip_"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)  # ~600 MB of float32 weights
    model_dir = save_random_hf_clip(folder, VIT_B_32)
    generator = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (size, 3, 256, 256), dtype=torch.uint8, generator=generator).to(device)
    captions = [f"a photo number {i} of a cat on a sofa" for i in range(size)]
    ours = CLIPScore("hf", model_dir, scale=100).to(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = TorchmetricsCLIPScore(
            lambda: (TensorFeatures(CLIPModel.from_pretrained(model_dir)), CLIPProcessor.from_pretrained(model_dir))
        ).to(device)

    # the two reductions differ on purpose (gpumetrics clamps each pair at 0, torchmetrics the batch mean), so the
    # check derives both from one set of cosines: gpumetrics' own, and torchmetrics' value must follow from them
    with torch.no_grad():
        image, text = ours.encoder(ours.encoder.preprocess(images), captions)
    cosine = torch.nn.functional.cosine_similarity(image.double(), text.double(), dim=-1)
    expected_ours = float((100 * cosine).clamp(min=0).mean())
    expected_theirs = max(float(100 * cosine.mean()), 0.0)

    def score(metric) -> float:
        metric.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            metric.update(images, captions)
            return float(metric.compute())

    return Contenders(
        ours={"CLIPScore(hf).update + compute": lambda: score(ours)},
        anchors={"torchmetrics CLIPScore.update + compute (same model files)": lambda: score(theirs)},
        check=lambda mine, anchor: abs(mine - expected_ours) <= 1e-6 and abs(anchor - expected_theirs) <= 2e-3,
        note="random-weight hf CLIP ViT-B/32 saved once, loaded by both; 256×256 uint8 inputs; the forward dominates "
        "(≈ 1 s of ≈ 1 s, ±10 % run to run here), preprocessing ≈ 7 ms (gpumetrics, on the device) vs ≈ 10 ms (hf "
        "processor); ratio ≈ 1 is the expected CPU result",
    )


@register("kid_compute", sizes=(2_000,), quick_sizes=(500,), unit="features per side", repeats=3)
def kid_compute_case(size: int, device: str) -> Contenders:
    """KID from stored 2048-d features with torchmetrics' defaults (100 subsets of 1,000), the same subsets on both."""
    from torchmetrics.image.kid import KernelInceptionDistance as TorchmetricsKID

    from gpumetrics.image.kid import kernel_inception_distance

    subsets, subset_size, seed = 100, min(1_000, size), 42
    generator = torch.Generator().manual_seed(0)
    real = torch.rand(size, 2048, generator=generator, dtype=torch.float64).to(device)
    fake = (torch.rand(size, 2048, generator=generator, dtype=torch.float64) * 0.8 + 0.15).to(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = TorchmetricsKID(feature=IdentityFeatures(2048), subsets=subsets, subset_size=subset_size).to(device)
    theirs.update(real, real=True)
    theirs.update(fake, real=False)

    def ours():
        mean, _ = kernel_inception_distance(real, fake, subsets, subset_size, seed=seed, canonical_order=False)
        return float(mean)

    def torchmetrics_compute():
        torch.manual_seed(seed)  # torchmetrics draws subsets from the global generator: the same randperms
        theirs._computed = None
        return float(theirs.compute()[0])

    return Contenders(
        ours={"kernel_inception_distance (canonical_order=False)": ours},
        anchors={"torchmetrics KernelInceptionDistance.compute": torchmetrics_compute},
        check=lambda mine, anchor: abs(mine - anchor) <= 1e-6 * max(abs(anchor), 1e-6),
        note="float64 features, 100 subsets × 1,000, poly kernel degree 3; same subsets, same value (1e-6 relative)",
    )



@register("fid_files", sizes=(1000,), quick_sizes=(100,), unit="JPEG files", repeats=3)
def fid_files_case(size: int, device: str) -> Contenders:
    """FID's file pipeline: JPEGs of 256×256 decoded and passed to a cheap 64-d feature module (8×8 average pool of
    the grey image), so decoding dominates as it does beside a GPU's forward; gpumetrics' workers vs its serial path
    and pytorch-fid's DataLoader."""
    import atexit
    import shutil
    import tempfile

    from PIL import Image
    from pytorch_fid.fid_score import get_activations

    from gpumetrics.image.image_files import add_image_files
    from gpumetrics.image.io import default_workers, list_images

    folder = Path(tempfile.mkdtemp(prefix="gpumetrics_bench_jpegs_"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    generator = torch.Generator().manual_seed(0)
    base = torch.randint(0, 256, (3, 64, 64), dtype=torch.uint8, generator=generator)
    for i in range(size):  # smooth images (upsampled noise) compress like photos, unlike raw noise
        pixels = torch.nn.functional.interpolate(base[None].float().roll(i, -1), size=(256, 256), mode="bilinear")
        Image.fromarray(pixels[0].clamp(0, 255).byte().permute(1, 2, 0).numpy()).save(folder / f"{i:05d}.jpg",
                                                                                       quality=90)
    files = list_images(folder)
    workers = max(2, default_workers())  # the pipeline itself: on <= 2 cores the default decodes serially

    class Pooled(torch.nn.Module):
        dims = 64

        def forward(self, images):
            grey = images.float().mean(dim=1, keepdim=True)
            return torch.nn.functional.adaptive_avg_pool2d(grey, 8).flatten(1)

    class PytorchFidModel(torch.nn.Module):  # pytorch-fid's get_activations reads model(batch)[0]: [B, d, 1, 1]
        def forward(self, batch):
            return [Pooled()(batch)[:, :, None, None]]

    def ours(decode: str = "pil", workers: int = workers):
        metric = FrechetInceptionDistance(feature=Pooled()).to(device)
        add_image_files(metric, files, True, 50, device, workers=workers, decode=decode)
        return metric

    contenders = {f"add_image_files ({workers} workers)": ours}
    if device.startswith("cuda"):
        contenders["add_image_files (decode=nvjpeg)"] = lambda: ours("nvjpeg")
    return Contenders(
        ours=contenders,
        anchors={
            "gpumetrics serial decoding (workers=0)": lambda: ours(workers=0),
            f"pytorch-fid get_activations ({workers} workers)": lambda: get_activations(
                [str(f) for f in files], PytorchFidModel(), 50, 64, device, num_workers=workers),
        },
        note="decoding-bound (a 64-d pooled-pixel feature), batch 50; workers = default_workers() of this machine, at "
             "least 2 (on 2 cores or fewer the default decodes in the main process)",
    )


@register("clip_speed_modes", sizes=(32,), quick_sizes=(2,), unit="images", repeats=3)
def clip_speed_modes_case(size: int, device: str) -> Contenders:
    """CLIPScore.update in each precision (open_clip ViT-B-32 architecture, random weights) against true float32."""
    from gpumetrics.image.clip_score import CLIPScore

    generator = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (size, 3, 256, 256), dtype=torch.uint8, generator=generator).to(device)
    captions = [f"a photo number {i} of a cat on a sofa" for i in range(size)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metrics = {mode: CLIPScore("open_clip", "ViT-B-32", pretrained="random", speed_mode=mode).to(device)
                   for mode in (None, "tf32", "bf16", "fp16")}
    return Contenders(
        ours={f"CLIPScore.update speed_mode={mode}": (lambda m=metric: m.update(images, captions))
              for mode, metric in metrics.items() if mode is not None},
        anchors={"CLIPScore.update (true float32)": lambda: metrics[None].update(images, captions)},
        note="256×256 uint8 inputs; a CPU has no TF32 or fast fp16: the ratios matter on a GPU",
    )


@register("clip_tokenize", sizes=(256, 4096), quick_sizes=(32,), unit="captions", repeats=7)
def clip_tokenize_case(size: int, device: str) -> Contenders:
    """The host's share of ``CLIPScore.update`` (open_clip backend): the captions' BPE ids, batch-wise vs open_clip's
    tokenizer (the same ``LongTensor``). Both keep their per-word BPE caches warm after the first round."""
    import random

    import open_clip

    from gpumetrics.image.clip_tokens import BatchCLIPTokenizer
    from testkit.text_data import random_caption

    rng = random.Random(size)
    captions = [random_caption(rng) for _ in range(size)]
    reference = open_clip.get_tokenizer("ViT-B-32")
    ours = BatchCLIPTokenizer(reference)
    return Contenders(
        ours={"BatchCLIPTokenizer (open_clip backend of CLIPScore)": lambda: ours(captions)},
        anchors={"open_clip SimpleTokenizer (ViT-B-32)": lambda: reference(captions)},
        check=lambda a, b: torch.equal(a, b),
        note="testkit's COCO-style captions (some with accents, dashes, curly quotes: those take ftfy's path); host "
             "work a GPU's bf16 encoders would otherwise wait on (256 captions: the GPU rows' batch)",
    )
