// The row-wise and elementwise vision ops on device (semantics of arc/kernels/vision_ops.h):
// LayerNorm with weight and bias (one block per row, two passes over the row), GELU in its tanh
// and erf forms, and rotary from a cos/sin table (one thread per rotated pair).
#pragma once

#include "arc/kernels/vision_ops.h"
#include "cuda/common.cuh"
