// SPDX-License-Identifier: GPL-2.0
/*
 * alloctag_errpath.c with a broken error path: when its second allocation
 * fails, the first one leaks. The error-path sweeper must report it.
 */
#define ALLOCTAG_ERRPATH_LEAKY
#include "alloctag_errpath.c"
