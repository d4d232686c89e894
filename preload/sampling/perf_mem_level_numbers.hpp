// <linux/perf_event.h>, with the data-source level numbers newer than the
// installed kernel headers (Linux 6.11) defined as the kernel defines them,
// for the decoder (data_source.cpp) and the tests that build data sources.
#pragma once

#include <linux/perf_event.h>

#ifndef PERF_MEM_LVLNUM_L2_MHB
#define PERF_MEM_LVLNUM_L2_MHB 0x05
#endif
#ifndef PERF_MEM_LVLNUM_MSC
#define PERF_MEM_LVLNUM_MSC 0x06
#endif
#ifndef PERF_MEM_LVLNUM_UNC
#define PERF_MEM_LVLNUM_UNC 0x08
#endif
