// SPDX-License-Identifier: MIT
/*
 * vsprintf.h - libprintk's own formatter (private to the library).
 *
 * printk() must be callable from signal handlers, so it cannot use the C
 * library's vsnprintf (locale look-ups, malloc for wide or large
 * conversions, errno writes). This module owns the whole of formatting:
 * standard conversions byte for byte as glibc's snprintf prints them in the
 * C locale, exact (correctly rounded) floating point, the kernel's %pV, and
 * for printk and <printk/sprintf.h> (the kernel-semantics entry points) the
 * kernel's rules where they differ from C's (docs/kernel-compat.md,
 * section 16) and its other %p extensions.
 *
 * Invariants for every function declared here:
 *  - async-signal-safe and thread-safe: no locks; the only static mutable
 *    state is the %p hash seed, drawn once by the first hashed %p
 *    (getrandom(2)) and published with one CAS, and the no_hash_pointers
 *    switch;
 *  - no allocation (but pk_kasprintf's malloc, which is not declared
 *    here and is not for signal handlers): all scratch space is on the
 *    stack, bounded: about 200
 *    bytes for the driver, 1 KiB more during a double conversion, 3 KiB
 *    during a long double one, 1.3 KiB while a format with positional
 *    arguments is processed, about 300 bytes per level of %pV, about
 *    500 bytes while a kernel %p extension is printed (600 for %pS, whose
 *    symbol look-up reads the tables symbols.c made at start-up);
 *  - no locale: always the C locale's decimal point and no grouping;
 *  - errno is never changed (%m reads it): the one write, by a failing
 *    getrandom(2), is undone before anything reads it;
 *  - never writes more than size bytes, never reads a %s argument beyond
 *    its precision, never writes through a %n argument.
 *
 * Differences of the C99 mode from glibc 2.36 (documented choices,
 * everything else matches):
 *  - %lc / %ls emit UTF-8 for non-ASCII characters (glibc's C locale fails
 *    with EILSEQ); invalid code points become U+FFFD;
 *  - %pV formats a struct va_format (kernel extension, see below): flags
 *    and width are ignored, a NULL pointer prints "(null)", nesting deeper
 *    than PK_VSPRINTF_MAX_DEPTH prints nothing, and a malformed format
 *    inside it ends that %pV's output without failing the whole call;
 *  - %n consumes its argument but stores nothing;
 *  - a %s, %ls or %pV pointer in the first page (but not NULL) or among
 *    the top 4095 addresses (the kernel's ERR_PTR values) prints
 *    "(efault)" as the kernel does, cut to the precision and padded to the
 *    width with spaces; it is never dereferenced (glibc would crash);
 *  - floating point always rounds to nearest, ties to even (glibc follows
 *    the current fesetround() mode);
 *  - a format naming positional arguments beyond %64$ returns -1;
 *  - x87 unnormal long double encodings print as nan (as glibc does).
 *
 * Cost: linear in the output except for floating point, whose exact
 * conversion grows with the magnitude of the decimal exponent, most for a
 * long double near the ends of its range (figures in docs/performance.md).
 */
#ifndef PRINTK_VSPRINTF_H
#define PRINTK_VSPRINTF_H

#include <stdarg.h>
#include <stddef.h>

#include <printk/sprintf.h>

#if defined(__GNUC__) || defined(__clang__)
#define PK_PRINTF_FORMAT(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))
#else
#define PK_PRINTF_FORMAT(fmt_idx, arg_idx)
#endif

/* %pV nesting deeper than this prints nothing for the innermost %pV. */
#define PK_VSPRINTF_MAX_DEPTH 8

/* Highest argument number a positional conversion (%N$d) may name. */
#define PK_VSPRINTF_MAX_POSITIONAL 64

/* The kernel's %pV argument: vaf->fmt is formatted with a copy of *vaf->va. */
#ifndef PK_VA_FORMAT_DEFINED
#define PK_VA_FORMAT_DEFINED
struct va_format {
	const char *fmt;
	va_list *va;
};
#endif

/*
 * C99 and glibc semantics, for the library's own text (prefixes, names,
 * notices), whose formats never meet a case where the two differ: returns
 * the length the complete output would have (not counting the NUL), stores
 * at most size - 1 bytes and a NUL when size > 0 (buf may be NULL when
 * size is 0). Returns -1 when the output would exceed INT_MAX bytes or the
 * format ends in the middle of a conversion. %p is glibc's (0x1234, (nil),
 * the letters after it printed as text); %pV is expanded.
 */
int pk_fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int pk_fmt_snprintf(char *buf, size_t size, const char *fmt, ...) PK_PRINTF_FORMAT(3, 4);

/*
 * Kernel semantics for printk: never loses the message. Returns the length
 * of the complete output like pk_fmt_vsnprintf, and reports in *@last its last
 * byte, even when the output was cut (0 for empty output): printk keeps the
 * newline of a message longer than its buffer. The kernel's printf rules
 * apply where they differ from C's (a zero with a precision of 0 prints
 * "0", "%.s" is "%s", a negative "*" precision is 0, the 0 flag pads even
 * with a precision, '#' prefixes 0x to 0, a NULL %s is "(null)" cut to the
 * precision, %n and unknown conversions end the output: docs/kernel-compat.md,
 * section 16). %p is the kernel's: hashed
 * (NULL and ERR_PTR values print as they are), and the letters and digits
 * after it select an extension (%pM, %pI4, %pISpc, %pU, %*ph, %pE, %pe,
 * %px, %pK, %pa, %pS, %pV...) and are never printed; unknown ones print as
 * %p (docs/kernel-compat.md, section 14). Where pk_fmt_vsnprintf would fail, it
 * does not:
 *  - a width above 2^23 - 1 or a precision above 2^15 - 1 (the kernel's
 *    FIELD_WIDTH_MAX and PRECISION_MAX), "*" ones included, is clamped to
 *    that limit; so is one written in the format too large for an int:
 *    "%2147483648d" of 1 is 8388606 spaces and "1";
 *  - a format that ends inside a conversion ("abc%", "abc%5") or names
 *    more than PK_VSPRINTF_MAX_POSITIONAL arguments keeps the output
 *    before that conversion ("abc") and ends there, as the kernel ends its
 *    output at an invalid conversion;
 *  - an output longer than INT_MAX returns INT_MAX.
 */
int pk_vsnprintf_last(char *buf, size_t size, char *last, const char *fmt, va_list ap);

/*
 * The public kernel-semantics functions (pk_snprintf, pk_scnprintf,
 * pk_sprintf, pk_kasprintf and their va_list forms) are declared in
 * <printk/sprintf.h>; they format as pk_vsnprintf_last does.
 */

/*
 * PRINTK_OPTS's no_hash_pointers: from now on a hashed %p (and %pK, and %pe
 * of a valid pointer) prints the address itself. Returns 1 if this call
 * turned it on, 0 if it was on already; start-up then stores the kernel's
 * warning banner, pk_no_hash_pointers_banner, one record a line.
 */
int pk_no_hash_pointers_enable(void);
#define PK_NO_HASH_POINTERS_BANNER_LINES 13
extern const char *const pk_no_hash_pointers_banner[PK_NO_HASH_POINTERS_BANNER_LINES];

#endif /* PRINTK_VSPRINTF_H */
