# LibTorch, kept in as few targets as possible (one translation unit
# with <torch/torch.h> costs ~40 s and ~1 GB to compile, and every process that links it pays
# ~1.5 s at start-up). Only rl/learning/ and the tagflow-torch executable link `torch`.
find_package(Torch 1.13 REQUIRED)
