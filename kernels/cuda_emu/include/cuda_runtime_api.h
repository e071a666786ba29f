// Stand-in for cuda_runtime_api.h under ARC_CUDA_EMULATION: the runtime calls (cuda_runtime.h).
#pragma once

#include "cuda_runtime.h"
