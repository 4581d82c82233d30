#ifndef SOUNDTRACK_CBLAS_SHIM_H
#define SOUNDTRACK_CBLAS_SHIM_H
#include <cblas.h>
#endif
