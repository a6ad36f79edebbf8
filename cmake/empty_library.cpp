// An empty shared library: the stand-in for a library LibTorch names but never calls
// (cmake/TagflowTorch.cmake).
