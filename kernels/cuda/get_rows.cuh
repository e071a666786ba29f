// Embedding lookup: dequantizes table rows in any supported format to F32 on device. An id out
// of range cannot be reported without a host sync, so its output row is zeros.
#pragma once

#include "cuda/common.cuh"
