"""Shared by tests/ and benchmarks/ (never shipped): data generators, reference implementations and the DDP runner.

``text_data`` (seeded text batches), ``qa_reference`` (the SQuAD / AIJ formulas in plain Python), ``clip_models``
(random-weight CLIP checkpoints), ``codebleu_data`` (HumanEval programs and their edits), ``ddp`` (real 2-process gloo
runs), ``checkout`` (this checkout's ``PYTHONPATH`` for subprocesses), ``pytorch_fid_scipy`` (pytorch-fid's
Fréchet step on SciPy ≥ 1.18). Benchmarks import from here, never from ``tests``.
"""
