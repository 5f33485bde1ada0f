// The CUDA path of stencil/ (compiled when nvcc is found; every function here exists in
// every build and reports a clear taihu::Error when CUDA or a GPU is missing).
// Options::kernel = KernelKind::cuda runs the time step on the GPU inside the normal
// Propagator (fields cross PCIe each step: correct everywhere, including under MPI).
// cuda_time_acoustic3d measures the device-resident kernel alone, for the benchmark.
#pragma once

namespace taihu::stencil {

// True when taihu was built with CUDA and a GPU is visible.
bool cuda_device_available();

// Seconds per time step of the device-resident 3D constant-density acoustic kernel
// (register + shared-memory sliding window along y) on an n0 x n1 x n2 grid, median of
// `steps` steps. Throws taihu::Error without CUDA or a GPU.
double cuda_time_acoustic3d(long n0, long n1, long n2, int space_order, int steps);

// The device's memory bandwidth ceiling in GB/s: a 1 GiB device-to-device copy, read +
// write bytes counted (the HBM roofline the benchmark divides by).
double cuda_copy_gbps();

}  // namespace taihu::stencil
