/* ikp.h's implementation (its CUDA helpers and their kernels too), compiled
   once and linked into every GPU test and benchmark program: each of them
   includes ikp.h for its declarations only. (The examples keep the usual
   single-file way, IKP_IMPLEMENTATION in their own source.) */
#define IKP_IMPLEMENTATION
#include "../../ikp.h"
