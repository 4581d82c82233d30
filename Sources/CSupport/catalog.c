#include "csupport.h"

/* The bundled catalog (datasets/musicoset/catalog.csv), built into the executable so that a binary
 * copied anywhere can create a database without the checkout. The path is given by Package.swift
 * (SOUNDTRACK_CATALOG_PATH, absolute); the assembler includes the file's bytes as they are. A change
 * of the CSV alone does not rebuild this file: touch it (or clean the build) after editing the CSV. */
#ifdef SOUNDTRACK_CATALOG_PATH
__asm__(
    ".section .rodata\n"
    ".balign 16\n"
    ".global soundtrack_catalog_start\n"
    "soundtrack_catalog_start:\n"
    ".incbin \"" SOUNDTRACK_CATALOG_PATH "\"\n"
    ".global soundtrack_catalog_end\n"
    "soundtrack_catalog_end:\n"
    ".byte 0\n"
    ".previous\n");

extern const unsigned char soundtrack_catalog_start[];
extern const unsigned char soundtrack_catalog_end[];

const unsigned char *soundtrack_bundled_catalog(size_t *size) {
    *size = (size_t)(soundtrack_catalog_end - soundtrack_catalog_start);
    return soundtrack_catalog_start;
}
#else
const unsigned char *soundtrack_bundled_catalog(size_t *size) {
    *size = 0;
    return 0;
}
#endif
