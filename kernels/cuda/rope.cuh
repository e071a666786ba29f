// RoPE on device, the semantics of kernels/cpu/rope.cpp: angles per (token, pair) in double
// (linear scaling, frequency factors, YaRN ramp and magnitude), applied in F32 to every head.
#pragma once

#include "cuda/common.cuh"
