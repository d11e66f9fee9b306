"""FID: Fréchet distance at d = 2048 vs pytorch-fid (scipy sqrtm) and torchmetrics; FID update vs the raw forward."""

from __future__ import annotations

import warnings

import torch
from torchmetrics.image.fid import FrechetInceptionDistance as TorchmetricsFID
from torchmetrics.image.fid import _compute_fid

from benchmarks.registry import Contenders, register
from gpumetrics.image.fid import FrechetInceptionDistance, feature_statistics, frechet_distance
from gpumetrics.image.inception import FIDInceptionV3, random_fid_inception_state_dict


def _inception_like_stats(d: int, n: int, seed: int, shift: float):
    """Mean/covariance of ``n`` non-negative correlated features (full rank when n > d), like pool3 activations."""
    generator = torch.Generator().manual_seed(seed)
    mixing = torch.randn(d, d, generator=generator, dtype=torch.float64) / d**0.5
    features = (torch.randn(n, d, generator=generator, dtype=torch.float64) @ mixing).abs() + shift
    return feature_statistics(features)


@register("frechet_distance", sizes=(2048,), quick_sizes=(256,), unit="dims", repeats=3)
def frechet_distance_case(size: int, device: str) -> Contenders:
    from pytorch_fid.fid_score import calculate_frechet_distance

    mu1, sigma1 = _inception_like_stats(size, 2 * size, seed=0, shift=0.0)
    mu2, sigma2 = _inception_like_stats(size, 2 * size, seed=1, shift=0.05)
    on_device = [t.to(device) for t in (mu1, sigma1, mu2, sigma2)]
    as_numpy = [t.numpy() for t in (mu1, sigma1, mu2, sigma2)]

    def pytorch_fid():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy's deprecation of sqrtm(disp=...)
            return float(calculate_frechet_distance(*as_numpy))

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

    def raw_encoders():
        with torch.no_grad():
            pixels = encoder.preprocess(images)
            tokens = encoder.tokenizer(captions).to(device)
            return encoder.model.encode_image(pixels), encoder.model.encode_text(tokens)

    return Contenders(
        ours={"CLIPScore.update (open_clip ViT-B-32)": lambda: metric.update(images, captions)},
        anchors={"raw open_clip encode_image + encode_text (same preprocessing)": raw_encoders},
        note="random-weight ViT-B-32, 256×256 uint8 inputs; ratio ≈ 1 is the goal (metric overhead only)",
    )
