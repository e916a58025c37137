// SPDX-License-Identifier: MIT
/*
 * vsprintf_kernel.c - the kernel's %p extensions and number().
 *
 * Owns: everything printk's %p prints (Linux lib/vsprintf.c's pointer()
 * and its helpers, docs/kernel-compat.md section 14) but %pV, which the
 * driver formats since it recurses; the kernel's number() that the driver
 * also uses for the integer conversions in kernel mode (section 16); the
 * %p hash key (drawn once, published with one CAS) and the
 * no_hash_pointers switch, the only mutable state of the formatter.
 *
 * Async-signal-safe: memcpy and friends, strerrorname_np's table, the
 * symbol look-up of symbols.c for %pS, and getrandom(2) once per process
 * (then clock_gettime and getpid if that fails); no allocation; about 500
 * bytes of stack (600 for %pS).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strerrorname_np */
#endif

#include "base/stacktrace.h"
#include "format/vsprintf.h"
#include "format/vsprintf_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * The kernel's %p extensions (kernel semantics only: printk's entry points)
 *
 * Each one prints what Linux's lib/vsprintf.c prints for it, down to the
 * quirks: its own number() rules for padding, its error strings cut to 16
 * bytes, its Latin-1 ctype for the letters that follow %p. The C99 entry
 * points keep glibc's %p (the pointer, then the letters as text).
 */

/*
 * The kernel's number() for bases 8, 10 and 16: a width that the sign and
 * the "0x" or "0" prefix eat into, a precision that is a minimum digit
 * count (0 still prints "0"), zeros between prefix and digits with the 0
 * flag unless '-' is set, a precision or not. K_SPECIAL prefixes "0x"
 * even to 0, and "0" to octal digits other than a lone 0.
 */
void pk_knumber(struct sink *s, unsigned long long num, int base, struct kspec k)
{
	char tmp[24];
	char *end = tmp + sizeof(tmp), *dig;
	char sign = 0;
	bool pfx = base != 10 && (k.flags & K_SPECIAL);
	bool is_zero = num == 0;
	long long fw = k.width, prec = k.prec, nd;

	if (k.flags & K_LEFT)
		k.flags &= ~(unsigned int)K_ZEROPAD;
	if (k.flags & K_SIGN) {
		if ((long long)num < 0) {
			sign = '-';
			num = 0ULL - num;
		} else if (k.flags & K_PLUS) {
			sign = '+';
		} else if (k.flags & K_SPACE) {
			sign = ' ';
		}
		fw -= sign != 0;
	}
	if (pfx) {
		if (base == 16)
			fw -= 2;
		else if (!is_zero)
			fw--;
	}
	if (base == 16)
		dig = u_to_pow2(end, num, 4, (k.flags & K_UPPER) ? hex_upper : hex_lower);
	else if (base == 8)
		dig = u_to_pow2(end, num, 3, hex_lower);
	else
		dig = u_to_dec(end, num);
	nd = end - dig;
	if (prec < nd)
		prec = nd;
	fw -= prec;
	if (fw > 0 && !(k.flags & (K_ZEROPAD | K_LEFT))) {
		sink_fill(s, ' ', (size_t)fw);
		fw = 0;
	}
	if (sign)
		sink_putc(s, sign);
	if (pfx && (base == 16 || !is_zero))
		sink_putc(s, '0');
	if (pfx && base == 16)
		sink_putc(s, (k.flags & K_UPPER) ? 'X' : 'x');
	if (fw > 0 && !(k.flags & K_LEFT)) {
		sink_fill(s, (k.flags & K_ZEROPAD) ? '0' : ' ', (size_t)fw);
		fw = 0;
	}
	if (prec > nd)
		sink_fill(s, '0', (size_t)(prec - nd));
	sink_put(s, dig, (size_t)nd);
	if (fw > 0)
		sink_fill(s, ' ', (size_t)fw);
}

/* The kernel's string_nocheck(): cut to the precision, padded to the width. */
static void kstring(struct sink *s, const char *str, size_t n, const struct kspec *k)
{
	size_t pad;

	if (k->prec >= 0 && (size_t)k->prec < n)
		n = (size_t)k->prec;
	pad = k->width > 0 && (size_t)k->width > n ? (size_t)k->width - n : 0;
	if (pad && !(k->flags & K_LEFT))
		sink_fill(s, ' ', pad);
	sink_put(s, str, n);
	if (pad && (k->flags & K_LEFT))
		sink_fill(s, ' ', pad);
}

/* The kernel's error_string(): at most 2 * sizeof(void *) bytes by default. */
void pk_kerror(struct sink *s, const char *msg, const struct kspec *k)
{
	struct kspec e = *k;

	if (e.prec < 0)
		e.prec = 2 * (int)sizeof(void *);
	kstring(s, msg, strlen(msg), &e);
}

/* The kernel's check_pointer(): false (and the message printed) if unusable. */
bool pk_kcheck(struct sink *s, const void *p, const struct kspec *k)
{
	if (!p) {
		pk_kerror(s, "(null)", k);
		return false;
	}
	if (bad_pointer(p)) {
		pk_kerror(s, "(efault)", k);
		return false;
	}
	return true;
}

/* An ERR_PTR(-errno) value: the top 4095 addresses. */
static inline bool k_is_err(const void *p)
{
	return (uintptr_t)p > UINTPTR_MAX - PK_MAX_ERRNO;
}

/* ---- %p hashing ---- */

static _Atomic int no_hash_pointers;

int pk_no_hash_pointers_enable(void)
{
	return !atomic_exchange(&no_hash_pointers, 1);
}

const char *const pk_no_hash_pointers_banner[PK_NO_HASH_POINTERS_BANNER_LINES] = {
	"**********************************************************",
	"**   NOTICE NOTICE NOTICE NOTICE NOTICE NOTICE NOTICE   **",
	"**                                                      **",
	"** This system shows unhashed kernel memory addresses   **",
	"** via the console, logs, and other interfaces. This    **",
	"** might reduce the security of your system.            **",
	"**                                                      **",
	"** If you see this message and you are not debugging    **",
	"** the kernel, report this immediately to your system   **",
	"** administrator!                                       **",
	"**                                                      **",
	"**   NOTICE NOTICE NOTICE NOTICE NOTICE NOTICE NOTICE   **",
	"**********************************************************",
};

static inline uint64_t rotl64(uint64_t x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIP_ROUND(v0, v1, v2, v3)                                                                  \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = rotl64(v1, 13) ^ v0;                                                          \
		v0 = rotl64(v0, 32);                                                               \
		v2 += v3;                                                                          \
		v3 = rotl64(v3, 16) ^ v2;                                                          \
		v0 += v3;                                                                          \
		v3 = rotl64(v3, 21) ^ v0;                                                          \
		v2 += v1;                                                                          \
		v1 = rotl64(v1, 17) ^ v2;                                                          \
		v2 = rotl64(v2, 32);                                                               \
	} while (0)

/*
 * SipHash-2-4 (Aumasson and Bernstein, 2012) of one 4- or 8-byte
 * little-endian word, as the kernel's siphash_1u32/siphash_1u64.
 */
static uint64_t siphash_word(uint64_t m, unsigned int len, uint64_t k0, uint64_t k1)
{
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL;
	uint64_t v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL;
	uint64_t v3 = k1 ^ 0x7465646279746573ULL;
	uint64_t b = (uint64_t)len << 56;

	if (len == 8) {
		v3 ^= m;
		SIP_ROUND(v0, v1, v2, v3);
		SIP_ROUND(v0, v1, v2, v3);
		v0 ^= m;
	} else {
		b |= m;
	}
	v3 ^= b;
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The process's pointer-hash seed, drawn at first use: one CAS publishes it,
 * so racing threads and signal handlers agree without waiting on each other
 * (a loser adopts the winner's seed). 0 means "not drawn yet".
 */
static _Atomic uint64_t ptr_hash_seed;

static PK_NOINLINE uint64_t draw_seed(void)
{
	uint64_t r = 0, expected = 0;
	int saved = errno;
	ssize_t n = getrandom(&r, sizeof(r), GRND_NONBLOCK);

	if (n != (ssize_t)sizeof(r)) {
		/*
		 * No entropy to be had (a kernel before 3.17, a seccomp filter,
		 * early boot): the failed call wrote errno, which a later %m
		 * must not see. The fallback is not secret, only different
		 * from run to run (ASLR, pid, time).
		 */
		struct timespec ts = {0, 0};

		(void)clock_gettime(CLOCK_MONOTONIC, &ts);
		r = mix64((uint64_t)(uintptr_t)&r ^ mix64((uint64_t)(uintptr_t)&ptr_hash_seed) ^
			  mix64((uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_nsec) ^
			  (uint64_t)ts.tv_sec);
		errno = saved;
	}
	if (!r)
		r = 1;
	if (!atomic_compare_exchange_strong(&ptr_hash_seed, &expected, r))
		r = expected;
	return r;
}

/* The kernel's ptr_to_id(): a 32-bit SipHash of the pointer. */
static unsigned long hash_pointer(const void *p)
{
	uint64_t seed = atomic_load_explicit(&ptr_hash_seed, memory_order_relaxed);

	if (PK_UNLIKELY(!seed))
		seed = draw_seed();
	/* The kernel's key is 128 random bits; ours derives its second half. */
	if (sizeof(void *) == 8)
		return (unsigned long)(siphash_word((uint64_t)(uintptr_t)p, 8, seed, mix64(seed)) &
				       0xffffffffu);
	return (unsigned long)siphash_word((uint64_t)(uintptr_t)p, 4, seed, mix64(seed));
}

/* The kernel's pointer_string(): by default zero-padded to the pointer width. */
static void kpointer_string(struct sink *s, uintptr_t v, struct kspec k)
{
	if (k.width < 0) {
		k.width = 2 * (int)sizeof(void *);
		k.flags |= K_ZEROPAD;
	}
	pk_knumber(s, v, 16, k);
}

/* The kernel's default_pointer(): NULL and error pointers are not hashed. */
static void kdefault_pointer(struct sink *s, const void *p, const struct kspec *k)
{
	uintptr_t v = (uintptr_t)p;

	if (p && !k_is_err(p) && !atomic_load_explicit(&no_hash_pointers, memory_order_relaxed))
		v = hash_pointer(p);
	kpointer_string(s, v, *k);
}

/* The kernel's special_hex_number(): "0x" and 2 * @size digits, whatever the spec. */
static void kspecial_hex(struct sink *s, unsigned long long v, int size)
{
	struct kspec k = {K_SPECIAL | K_ZEROPAD, 2 + 2 * size, -1};

	pk_knumber(s, v, 16, k);
}

/* ---- byte strings ---- */

static inline char *hex_pack(char *p, unsigned char c, const char *digits)
{
	*p++ = digits[c >> 4];
	*p++ = digits[c & 15];
	return p;
}

/* %ph[CDN]: up to 64 bytes, the count from the width (1 without one). */
static void k_hex_string(struct sink *s, const unsigned char *addr, const char *ext,
			 const struct kspec *k)
{
	char sep;
	int n, i;

	if (k->width == 0)
		return;
	if (!pk_kcheck(s, addr, k))
		return;
	switch (ext[1]) {
	case 'C':
		sep = ':';
		break;
	case 'D':
		sep = '-';
		break;
	case 'N':
		sep = 0;
		break;
	default:
		sep = ' ';
		break;
	}
	n = k->width > 0 ? (k->width < 64 ? k->width : 64) : 1;
	for (i = 0; i < n;) {
		char tmp[66];
		char *e = tmp;

		while (i < n && e - tmp <= (ptrdiff_t)sizeof(tmp) - 3) {
			e = hex_pack(e, addr[i], hex_lower);
			if (sep && i != n - 1)
				*e++ = sep;
			i++;
		}
		sink_put(s, tmp, (size_t)(e - tmp));
	}
}

/* %p[mM][FR]: 6 bytes, ':' or '-' between them for M, reversed with R. */
static void k_mac(struct sink *s, const unsigned char *addr, const char *ext, const struct kspec *k)
{
	char out[18];
	char *p = out;
	char sep = ext[1] == 'F' ? '-' : ':';
	bool rev = ext[1] == 'R';
	int i;

	if (!pk_kcheck(s, addr, k))
		return;
	for (i = 0; i < 6; i++) {
		p = hex_pack(p, addr[rev ? 5 - i : i], hex_lower);
		if (ext[0] == 'M' && i != 5)
			*p++ = sep;
	}
	kstring(s, out, (size_t)(p - out), k);
}

/* %pU[bBlL]: 16 bytes; l and L read the first three fields little-endian. */
static void k_uuid(struct sink *s, const unsigned char *addr, const char *ext,
		   const struct kspec *k)
{
	static const unsigned char le_order[16] = {3, 2, 1,  0,	 5,  4,	 7,  6,
						   8, 9, 10, 11, 12, 13, 14, 15};
	char out[36];
	char *p = out;
	bool le = ext[1] == 'l' || ext[1] == 'L';
	const char *digits = ext[1] == 'B' || ext[1] == 'L' ? hex_upper : hex_lower;
	int i;

	if (!pk_kcheck(s, addr, k))
		return;
	for (i = 0; i < 16; i++) {
		p = hex_pack(p, addr[le ? le_order[i] : i], digits);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			*p++ = '-';
	}
	kstring(s, out, (size_t)(p - out), k);
}

/* ESCAPE_* of the kernel's string_escape_mem() (include/linux/string_helpers.h). */
enum {
	ESC_SPACE = 1 << 0,
	ESC_SPECIAL = 1 << 1,
	ESC_NULL = 1 << 2,
	ESC_OCTAL = 1 << 3,
	ESC_ANY = ESC_SPACE | ESC_SPECIAL | ESC_NULL | ESC_OCTAL,
	ESC_NP = 1 << 4,
	ESC_HEX = 1 << 5,
};

/* One byte as string_escape_mem() writes it; returns the bytes written to out. */
static size_t escape_byte(char *out, unsigned char c, unsigned int flags)
{
	char to = 0;

	if ((flags & ESC_NP) && k_isprint(c)) {
		out[0] = (char)c;
		return 1;
	}
	if (flags & ESC_SPACE) {
		switch (c) {
		case '\n':
			to = 'n';
			break;
		case '\r':
			to = 'r';
			break;
		case '\t':
			to = 't';
			break;
		case '\v':
			to = 'v';
			break;
		case '\f':
			to = 'f';
			break;
		default:
			break;
		}
	}
	if (!to && (flags & ESC_SPECIAL)) {
		switch (c) {
		case '\\':
			to = '\\';
			break;
		case '\a':
			to = 'a';
			break;
		case 0x1b:
			to = 'e';
			break;
		case '"':
			to = '"';
			break;
		default:
			break;
		}
	}
	if (!to && (flags & ESC_NULL) && c == 0)
		to = '0';
	if (to) {
		out[0] = '\\';
		out[1] = to;
		return 2;
	}
	if (flags & ESC_OCTAL) {
		out[0] = '\\';
		out[1] = (char)('0' + (c >> 6));
		out[2] = (char)('0' + ((c >> 3) & 7));
		out[3] = (char)('0' + (c & 7));
		return 4;
	}
	if (flags & ESC_HEX) {
		out[0] = '\\';
		out[1] = 'x';
		hex_pack(out + 2, c, hex_lower);
		return 4;
	}
	out[0] = (char)c;
	return 1;
}

/* %pE[achnops]: the width is the buffer's length (1 without one); no padding. */
static void k_escaped(struct sink *s, const unsigned char *addr, const char *ext,
		      const struct kspec *k)
{
	unsigned int flags = 0;
	size_t n, i;

	if (k->width == 0)
		return;
	if (!pk_kcheck(s, addr, k))
		return;
	for (i = 1;; i++) {
		unsigned int f;

		switch (ext[i]) {
		case 'a':
			f = ESC_ANY;
			break;
		case 'c':
			f = ESC_SPECIAL;
			break;
		case 'h':
			f = ESC_HEX;
			break;
		case 'n':
			f = ESC_NULL;
			break;
		case 'o':
			f = ESC_OCTAL;
			break;
		case 'p':
			f = ESC_NP;
			break;
		case 's':
			f = ESC_SPACE;
			break;
		default:
			f = 0;
			break;
		}
		if (!f)
			break;
		flags |= f;
	}
	if (!flags)
		flags = ESC_ANY | ESC_NP;
	n = k->width < 0 ? 1 : (size_t)k->width;
	for (i = 0; i < n;) {
		char tmp[64];
		size_t t = 0;

		while (i < n && t <= sizeof(tmp) - 4)
			t += escape_byte(tmp + t, addr[i++], flags);
		sink_put(s, tmp, t);
	}
}

/* ---- IP addresses ---- */

/* Dotted quad; @zeros: three digits each (%pi4); @idx/@step: byte order. */
static char *ip4_text(char *p, const unsigned char *a, bool zeros, int idx, int step)
{
	int i;

	for (i = 0; i < 4; i++, idx += step) {
		unsigned int v = a[idx];

		if (zeros || v >= 100)
			*p++ = (char)('0' + v / 100);
		if (zeros || v >= 10)
			*p++ = (char)('0' + v / 10 % 10);
		*p++ = (char)('0' + v % 10);
		if (i < 3)
			*p++ = '.';
	}
	return p;
}

/* The byte order a trailing h, l, n or b asks for (%pI4h, %pISl...). */
static void ip4_order(char m, int *idx, int *step)
{
	bool rev = m == 'l';

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (m == 'h')
		rev = true;
#endif
	*idx = rev ? 3 : 0;
	*step = rev ? -1 : 1;
}

/* Eight groups of four hex digits, with colons for %pI6, without for %pi6. */
static char *ip6_full(char *p, const unsigned char *a, bool colons)
{
	int i;

	for (i = 0; i < 16; i += 2) {
		p = hex_pack(p, a[i], hex_lower);
		p = hex_pack(p, a[i + 1], hex_lower);
		if (colons && i != 14)
			*p++ = ':';
	}
	return p;
}

/*
 * %pI6c: the kernel's compression (RFC 5952 in spirit): the first longest
 * run of two or more zero groups becomes "::", no leading zeros, and a
 * v4-mapped or ISATAP address ends in a dotted quad.
 */
static char *ip6_compressed(char *p, const unsigned char *a)
{
	unsigned int w[8];
	bool v4 = false, colon = false;
	int i, j, range, best = 1, at = -1;

	for (i = 0; i < 8; i++)
		w[i] = (unsigned int)a[2 * i] << 8 | a[2 * i + 1];
	if (!w[0] && !w[1] && !w[2] && !w[3] && !w[4] && w[5] == 0xffff)
		v4 = true;
	if ((a[8] & ~2u) == 0 && a[9] == 0 && a[10] == 0x5e && a[11] == 0xfe)
		v4 = true;
	range = v4 ? 6 : 8;
	for (i = 0; i < range; i++) {
		for (j = i; j < range && !w[j]; j++)
			;
		if (j - i > best) {
			best = j - i;
			at = i;
		}
	}
	for (i = 0; i < range; i++) {
		unsigned int v = w[i];

		if (i == at) {
			if (colon || i == 0)
				*p++ = ':';
			*p++ = ':';
			colon = false;
			i += best - 1;
			continue;
		}
		if (colon)
			*p++ = ':';
		if (v >= 0x1000)
			*p++ = hex_lower[v >> 12];
		if (v >= 0x100)
			*p++ = hex_lower[(v >> 8) & 15];
		if (v >= 0x10)
			*p++ = hex_lower[(v >> 4) & 15];
		*p++ = hex_lower[v & 15];
		colon = true;
	}
	if (v4) {
		if (colon)
			*p++ = ':';
		p = ip4_text(p, a + 12, false, 0, 1);
	}
	return p;
}

/* A number inside an address text, with the conversion's own spec (as the kernel). */
static void put_in(char *buf, size_t cap, size_t *len, unsigned long long v, const struct kspec *k)
{
	struct sink t = {buf, cap, *len, 0, true};

	pk_knumber(&t, v, 10, *k);
	*len = t.len < cap ? t.len : cap;
}

static void k_ip_sockaddr(struct sink *s, const void *ptr, const char *ext, const struct kspec *k)
{
	/* Sized as the kernel's buffers: a number the width widens is cut there. */
	char out[sizeof("[xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:255.255.255.255]") + sizeof(":12345") +
		 sizeof("/123456789") + sizeof("%1234567890")];
	bool raw = ext[0] == 'i';
	bool have_p = false, have_f = false, have_s = false, have_c = false;
	char m4 = 0;
	sa_family_t family;
	size_t n = 0;
	const char *f;

	for (f = ext + 2; k_isalpha((unsigned char)*f); f++) {
		switch (*f) {
		case 'p':
			have_p = true;
			break;
		case 'f':
			have_f = true;
			break;
		case 's':
			have_s = true;
			break;
		case 'c':
			have_c = true;
			break;
		case 'h':
		case 'l':
		case 'n':
		case 'b':
			m4 = *f;
			break;
		default:
			break;
		}
	}
	memcpy(&family, (const char *)ptr + offsetof(struct sockaddr, sa_family), sizeof(family));
	if (family == AF_INET) {
		struct sockaddr_in sin;
		int idx, step;

		memcpy(&sin, ptr, sizeof(sin));
		ip4_order(m4, &idx, &step);
		n = (size_t)(ip4_text(out, (const unsigned char *)&sin.sin_addr, raw, idx, step) -
			     out);
		if (have_p) {
			out[n++] = ':';
			put_in(out, sizeof("255.255.255.255") + sizeof(":12345") - 1, &n,
			       ntohs(sin.sin_port), k);
		}
	} else if (family == AF_INET6) {
		struct sockaddr_in6 sin6;
		const unsigned char *a;
		bool br = have_p || have_s || have_f;
		char *p = out;

		memcpy(&sin6, ptr, sizeof(sin6));
		a = (const unsigned char *)&sin6.sin6_addr;
		if (br)
			*p++ = '[';
		p = !raw && have_c ? ip6_compressed(p, a) : ip6_full(p, a, !raw);
		if (br)
			*p++ = ']';
		n = (size_t)(p - out);
		if (have_p) {
			out[n++] = ':';
			put_in(out, sizeof(out) - 1, &n, ntohs(sin6.sin6_port), k);
		}
		if (have_f && n < sizeof(out) - 1) {
			out[n++] = '/';
			put_in(out, sizeof(out) - 1, &n, ntohl(sin6.sin6_flowinfo) & 0x0fffffffu,
			       k);
		}
		if (have_s && n < sizeof(out) - 1) {
			out[n++] = '%';
			put_in(out, sizeof(out) - 1, &n, sin6.sin6_scope_id, k);
		}
	} else {
		pk_kerror(s, "(einval)", k);
		return;
	}
	kstring(s, out, n, k);
}

/* %p[Ii][46S]...: IPv4, IPv6 or a struct sockaddr of either. */
static void k_ip(struct sink *s, const unsigned char *addr, const char *ext, const struct kspec *k)
{
	char out[sizeof("xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:255.255.255.255")];
	char *e;

	if (!pk_kcheck(s, addr, k))
		return;
	switch (ext[1]) {
	case '6':
		if (ext[0] == 'I' && ext[2] == 'c')
			e = ip6_compressed(out, addr);
		else
			e = ip6_full(out, addr, ext[0] == 'I');
		break;
	case '4': {
		int idx, step;

		ip4_order(ext[2], &idx, &step);
		e = ip4_text(out, addr, ext[0] == 'i', idx, step);
		break;
	}
	case 'S':
		k_ip_sockaddr(s, addr, ext, k);
		return;
	default:
		pk_kerror(s, ext[0] == 'i' ? "(%pi?)" : "(%pI?)", k);
		return;
	}
	kstring(s, out, (size_t)(e - out), k);
}

/* ---- %pe ---- */

/* The kernel's internal error numbers (include/linux/errno.h), not in <errno.h>. */
#define K_ERESTARTSYS	  512
#define K_ERECALLCONFLICT 530

/* The names lib/errname.c knows, by number; any other prints as a number. */
static const char *const errno_names[] = {
	[EPERM] = "EPERM",
	[ENOENT] = "ENOENT",
	[ESRCH] = "ESRCH",
	[EINTR] = "EINTR",
	[EIO] = "EIO",
	[ENXIO] = "ENXIO",
	[E2BIG] = "E2BIG",
	[ENOEXEC] = "ENOEXEC",
	[EBADF] = "EBADF",
	[ECHILD] = "ECHILD",
	[EAGAIN] = "EAGAIN",
	[ENOMEM] = "ENOMEM",
	[EACCES] = "EACCES",
	[EFAULT] = "EFAULT",
	[ENOTBLK] = "ENOTBLK",
	[EBUSY] = "EBUSY",
	[EEXIST] = "EEXIST",
	[EXDEV] = "EXDEV",
	[ENODEV] = "ENODEV",
	[ENOTDIR] = "ENOTDIR",
	[EISDIR] = "EISDIR",
	[EINVAL] = "EINVAL",
	[ENFILE] = "ENFILE",
	[EMFILE] = "EMFILE",
	[ENOTTY] = "ENOTTY",
	[ETXTBSY] = "ETXTBSY",
	[EFBIG] = "EFBIG",
	[ENOSPC] = "ENOSPC",
	[ESPIPE] = "ESPIPE",
	[EROFS] = "EROFS",
	[EMLINK] = "EMLINK",
	[EPIPE] = "EPIPE",
	[EDOM] = "EDOM",
	[ERANGE] = "ERANGE",
	[EDEADLK] = "EDEADLK",
#if EDEADLOCK != EDEADLK
	[EDEADLOCK] = "EDEADLOCK",
#endif
	[ENAMETOOLONG] = "ENAMETOOLONG",
	[ENOLCK] = "ENOLCK",
	[ENOSYS] = "ENOSYS",
	[ENOTEMPTY] = "ENOTEMPTY",
	[ELOOP] = "ELOOP",
	[ENOMSG] = "ENOMSG",
	[EIDRM] = "EIDRM",
	[ECHRNG] = "ECHRNG",
	[EL2NSYNC] = "EL2NSYNC",
	[EL3HLT] = "EL3HLT",
	[EL3RST] = "EL3RST",
	[ELNRNG] = "ELNRNG",
	[EUNATCH] = "EUNATCH",
	[ENOCSI] = "ENOCSI",
	[EL2HLT] = "EL2HLT",
	[EBADE] = "EBADE",
	[EBADR] = "EBADR",
	[EXFULL] = "EXFULL",
	[ENOANO] = "ENOANO",
	[EBADRQC] = "EBADRQC",
	[EBADSLT] = "EBADSLT",
	[EBFONT] = "EBFONT",
	[ENOSTR] = "ENOSTR",
	[ENODATA] = "ENODATA",
	[ETIME] = "ETIME",
	[ENOSR] = "ENOSR",
	[ENONET] = "ENONET",
	[ENOPKG] = "ENOPKG",
	[EREMOTE] = "EREMOTE",
	[ENOLINK] = "ENOLINK",
	[EADV] = "EADV",
	[ESRMNT] = "ESRMNT",
	[ECOMM] = "ECOMM",
	[EPROTO] = "EPROTO",
	[EMULTIHOP] = "EMULTIHOP",
	[EDOTDOT] = "EDOTDOT",
	[EBADMSG] = "EBADMSG",
	[EOVERFLOW] = "EOVERFLOW",
	[ENOTUNIQ] = "ENOTUNIQ",
	[EBADFD] = "EBADFD",
	[EREMCHG] = "EREMCHG",
	[ELIBACC] = "ELIBACC",
	[ELIBBAD] = "ELIBBAD",
	[ELIBSCN] = "ELIBSCN",
	[ELIBMAX] = "ELIBMAX",
	[ELIBEXEC] = "ELIBEXEC",
	[EILSEQ] = "EILSEQ",
	[ERESTART] = "ERESTART",
	[ESTRPIPE] = "ESTRPIPE",
	[EUSERS] = "EUSERS",
	[ENOTSOCK] = "ENOTSOCK",
	[EDESTADDRREQ] = "EDESTADDRREQ",
	[EMSGSIZE] = "EMSGSIZE",
	[EPROTOTYPE] = "EPROTOTYPE",
	[ENOPROTOOPT] = "ENOPROTOOPT",
	[EPROTONOSUPPORT] = "EPROTONOSUPPORT",
	[ESOCKTNOSUPPORT] = "ESOCKTNOSUPPORT",
	[EOPNOTSUPP] = "EOPNOTSUPP",
	[EPFNOSUPPORT] = "EPFNOSUPPORT",
	[EAFNOSUPPORT] = "EAFNOSUPPORT",
	[EADDRINUSE] = "EADDRINUSE",
	[EADDRNOTAVAIL] = "EADDRNOTAVAIL",
	[ENETDOWN] = "ENETDOWN",
	[ENETUNREACH] = "ENETUNREACH",
	[ENETRESET] = "ENETRESET",
	[ECONNABORTED] = "ECONNABORTED",
	[ECONNRESET] = "ECONNRESET",
	[ENOBUFS] = "ENOBUFS",
	[EISCONN] = "EISCONN",
	[ENOTCONN] = "ENOTCONN",
	[ESHUTDOWN] = "ESHUTDOWN",
	[ETOOMANYREFS] = "ETOOMANYREFS",
	[ETIMEDOUT] = "ETIMEDOUT",
	[ECONNREFUSED] = "ECONNREFUSED",
	[EHOSTDOWN] = "EHOSTDOWN",
	[EHOSTUNREACH] = "EHOSTUNREACH",
	[EALREADY] = "EALREADY",
	[EINPROGRESS] = "EINPROGRESS",
	[ESTALE] = "ESTALE",
	[EUCLEAN] = "EUCLEAN",
	[ENOTNAM] = "ENOTNAM",
	[ENAVAIL] = "ENAVAIL",
	[EISNAM] = "EISNAM",
	[EREMOTEIO] = "EREMOTEIO",
	[EDQUOT] = "EDQUOT",
	[ENOMEDIUM] = "ENOMEDIUM",
	[EMEDIUMTYPE] = "EMEDIUMTYPE",
	[ECANCELED] = "ECANCELED",
	[ENOKEY] = "ENOKEY",
	[EKEYEXPIRED] = "EKEYEXPIRED",
	[EKEYREVOKED] = "EKEYREVOKED",
	[EKEYREJECTED] = "EKEYREJECTED",
	[EOWNERDEAD] = "EOWNERDEAD",
	[ENOTRECOVERABLE] = "ENOTRECOVERABLE",
	[ERFKILL] = "ERFKILL",
	[EHWPOISON] = "EHWPOISON",
};

_Static_assert(sizeof(errno_names) / sizeof(errno_names[0]) <= 300,
	       "errno numbers this large need another table (the kernel's errname.c)");

static const char *const kernel_errno_names[K_ERECALLCONFLICT - K_ERESTARTSYS + 1] = {
	"ERESTARTSYS",	"ERESTARTNOINTR", "ERESTARTNOHAND", "ENOIOCTLCMD", "ERESTART_RESTARTBLOCK",
	"EPROBE_DEFER", "EOPENSTALE",	  "ENOPARAM",	    NULL, /* 520 is unused */
	"EBADHANDLE",	"ENOTSYNC",	  "EBADCOOKIE",	    "ENOTSUPP",	   "ETOOSMALL",
	"ESERVERFAULT", "EBADTYPE",	  "EJUKEBOX",	    "EIOCBQUEUED", "ERECALLCONFLICT",
};

static const char *errno_name(unsigned int e)
{
	if (e < sizeof(errno_names) / sizeof(errno_names[0]))
		return errno_names[e];
	if (e >= K_ERESTARTSYS && e <= K_ERECALLCONFLICT)
		return kernel_errno_names[e - K_ERESTARTSYS];
	return NULL;
}

/* %pe of ERR_PTR(-e): "-ENAME", or the number in decimal for an unknown e. */
static void k_err_ptr(struct sink *s, const void *p, const struct kspec *k)
{
	long err = (long)(intptr_t)p;
	const char *name = errno_name((unsigned int)-err);
	struct kspec n = *k;

	if (name) {
		char tmp[32];
		size_t len = strlen(name);

		tmp[0] = '-';
		memcpy(tmp + 1, name, len);
		kstring(s, tmp, len + 1, k);
		return;
	}
	n.flags |= K_SIGN;
	pk_knumber(s, (unsigned long long)(long long)err, 10, n);
}

/* ---- bitmaps, FourCC codes, times ---- */

#define K_LONG_BITS ((int)(sizeof(unsigned long) * CHAR_BIT))

static unsigned long bitmap_word(const unsigned char *map, int word)
{
	unsigned long w;

	memcpy(&w, map + (size_t)word * sizeof(w), sizeof(w));
	return w;
}

/* %*pb: the width is the number of bits; 32-bit chunks in hex, highest first. */
static void k_bitmap(struct sink *s, const unsigned char *map, const struct kspec *k)
{
	int nbits = k->width > 0 ? k->width : 0;
	int chunk = nbits & 31 ? nbits & 31 : 32;
	int i = ((nbits + 31) & ~31) - 32;
	bool first = true;

	if (!pk_kcheck(s, map, k))
		return;
	for (; i >= 0; i -= 32, chunk = 32) {
		struct kspec d = {K_ZEROPAD, (chunk + 3) / 4, -1};
		unsigned long w = bitmap_word(map, i / K_LONG_BITS);
		uint32_t v = (uint32_t)(w >> (i % K_LONG_BITS)) & (uint32_t)((1ULL << chunk) - 1);

		if (!first)
			sink_putc(s, ',');
		first = false;
		pk_knumber(s, v, 16, d);
	}
}

static bool bitmap_bit(const unsigned char *map, int i)
{
	return (bitmap_word(map, i / K_LONG_BITS) >> (i % K_LONG_BITS)) & 1;
}

/* %*pbl: the set bits as ranges, "2-3,5,7". */
static void k_bitmap_list(struct sink *s, const unsigned char *map, const struct kspec *k)
{
	struct kspec d = {0, -1, -1};
	int nbits = k->width > 0 ? k->width : 0;
	bool first = true;
	int i = 0;

	if (!pk_kcheck(s, map, k))
		return;
	while (i < nbits) {
		int lo;

		if (!bitmap_bit(map, i)) {
			/* A whole zero word at once: %*pbl of a large, sparse map. */
			if (i % K_LONG_BITS == 0 && !bitmap_word(map, i / K_LONG_BITS))
				i += K_LONG_BITS;
			else
				i++;
			continue;
		}
		lo = i;
		while (i < nbits && bitmap_bit(map, i))
			i++;
		if (!first)
			sink_putc(s, ',');
		first = false;
		pk_knumber(s, (unsigned long long)lo, 10, d);
		if (i - 1 != lo) {
			sink_putc(s, '-');
			pk_knumber(s, (unsigned long long)(i - 1), 10, d);
		}
	}
}

static uint32_t swab32(uint32_t v)
{
	return v >> 24 | (v >> 8 & 0xff00) | (v << 8 & 0xff0000) | v << 24;
}

/*
 * %p4c[c|h|hR|l|b]: four characters and the code in hex (V4L2/DRM pixel
 * formats for c). The code is read in host order (h), reversed host order
 * (hR), little- or big-endian (l, b). Linux 6.16 renamed the reversed
 * order from %p4cn to %p4chR; the old spelling still reads the same.
 */
static void k_fourcc(struct sink *s, const void *ptr, const char *ext, const struct kspec *k)
{
	char out[sizeof("0123 little-endian (0x01234567)")];
	struct sink t = {out, sizeof(out) - 1, 0, 0, true};
	bool le = true, pixel = ext[2] == 'c';
	uint32_t orig, val;
	int i;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	le = false;
#endif
	if (ext[1] != 'c') {
		pk_kerror(s, "(%p4?)", k);
		return;
	}
	if (!pk_kcheck(s, ptr, k))
		return;
	memcpy(&orig, ptr, sizeof(orig));
	switch (ext[2]) {
	case 'h':
		if (ext[3] == 'R')
			orig = swab32(orig);
		break;
	case 'c':
		break;
	case 'n':
		orig = swab32(orig);
		break;
	case 'l':
		orig = le ? orig : swab32(orig);
		break;
	case 'b':
		orig = le ? swab32(orig) : orig;
		break;
	default:
		pk_kerror(s, "(%p4?)", k);
		return;
	}
	val = pixel ? swab32(orig & ~(1u << 31)) : orig;
	for (i = 0; i < 4; i++) {
		unsigned char c = (unsigned char)(val >> ((3 - i) * 8));

		sink_putc(&t, c >= 0x20 && c < 0x7f ? (char)c : '.');
	}
	if (pixel) {
		if (orig & (1u << 31))
			sink_put(&t, " big-endian", 11);
		else
			sink_put(&t, " little-endian", 14);
	}
	sink_put(&t, " (", 2);
	kspecial_hex(&t, orig, 4);
	sink_putc(&t, ')');
	kstring(s, out, t.len, k);
}

/* The first nine fields of the kernel's struct rtc_time, as in a struct tm. */
struct k_rtc {
	int sec, min, hour, mday, mon, year, wday, yday, isdst;
};

/* Days since 1970-01-01 to a proleptic Gregorian date (year - 1900, month 0-11). */
static void civil_from_days(long long z, struct k_rtc *tm)
{
	long long era, doe, yoe, doy, mp, y;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	y = yoe + era * 400 + (mp >= 10);
	tm->mday = (int)(doy - (153 * mp + 2) / 5 + 1);
	tm->mon = (int)(mp < 10 ? mp + 2 : mp - 10);
	tm->year = (int)(y - 1900);
}

/* %pt[RT][dt][rs]: ISO 8601 date and time; r: the fields as stored; s: ' ' for 'T'. */
static void k_time(struct sink *s, const void *ptr, const char *ext, const struct kspec *k)
{
	struct kspec d2 = {K_ZEROPAD, 2, -1}, d4 = {K_ZEROPAD, 4, -1};
	bool have_d = true, have_t = true, raw = false, iso = true;
	struct k_rtc tm;
	size_t i = 2;

	if (!pk_kcheck(s, ptr, k))
		return;
	if (ext[1] == 'R') {
		memcpy(&tm, ptr, sizeof(tm));
	} else {
		int64_t t;
		long long days, secs;

		memcpy(&t, ptr, sizeof(t));
		days = t / 86400;
		secs = t % 86400;
		if (secs < 0) {
			secs += 86400;
			days--;
		}
		civil_from_days(days, &tm);
		tm.hour = (int)(secs / 3600);
		tm.min = (int)(secs / 60 % 60);
		tm.sec = (int)(secs % 60);
	}
	if (ext[i] == 'd') {
		have_t = false;
		i++;
	} else if (ext[i] == 't') {
		have_d = false;
		i++;
	}
	for (;; i++) {
		if (ext[i] == 'r')
			raw = true;
		else if (ext[i] == 's')
			iso = false;
		else
			break;
	}
	if (have_d) {
		pk_knumber(s, (unsigned long long)(long long)(tm.year + (raw ? 0 : 1900)), 10, d4);
		sink_putc(s, '-');
		pk_knumber(s, (unsigned long long)(long long)(tm.mon + (raw ? 0 : 1)), 10, d2);
		sink_putc(s, '-');
		pk_knumber(s, (unsigned long long)(long long)tm.mday, 10, d2);
	}
	if (have_d && have_t)
		sink_putc(s, iso ? 'T' : ' ');
	if (have_t) {
		pk_knumber(s, (unsigned long long)(long long)tm.hour, 10, d2);
		sink_putc(s, ':');
		pk_knumber(s, (unsigned long long)(long long)tm.min, 10, d2);
		sink_putc(s, ':');
		pk_knumber(s, (unsigned long long)(long long)tm.sec, 10, d2);
	}
}

/* %pra: a struct range of two u64, "[range 0x...-0x...]" (one number if equal). */
static void k_range(struct sink *s, const void *ptr, const struct kspec *k)
{
	char out[sizeof("[range 0x0123456789abcdef-0x0123456789abcdef]")];
	struct sink t = {out, sizeof(out) - 1, 0, 0, true};
	uint64_t r[2];

	if (!pk_kcheck(s, ptr, k))
		return;
	memcpy(r, ptr, sizeof(r));
	sink_put(&t, "[range ", 7);
	kspecial_hex(&t, r[0], 8);
	if (r[0] != r[1]) {
		sink_putc(&t, '-');
		kspecial_hex(&t, r[1], 8);
	}
	sink_putc(&t, ']');
	kstring(s, out, t.len, k);
}

/* ---- symbols ---- */

/*
 * The kernel's symbol_string(): %pS "name+0xoff/0xsize [object]", %ps the
 * name alone, %pB a return address (looked up one byte back), %pSR the
 * same as %pS (return addresses need no unmangling on x86-64 or aarch64).
 * An address no symbol holds prints as a kernel without kallsyms prints
 * every one: the hexadecimal address.
 */
static PK_NOINLINE void k_symbol(struct sink *s, void *ptr, const char *ext, const struct kspec *k)
{
	char sym[PK_KSYM_SYMBOL_LEN];
	int n = pk_sprint_symbol(sym, sizeof(sym), (uintptr_t)ptr, ext[0] != 's', ext[0] == 'B');

	if (n < 0) {
		kspecial_hex(s, (uintptr_t)ptr, (int)sizeof(void *));
		return;
	}
	kstring(s, sym, strnlen(sym, sizeof(sym)), k);
}

/* ---- the dispatcher ---- */

/*
 * The kernel's pointer(): @ext points just past the 'p'. Returns the format
 * position after every letter and digit that follows (the kernel skips them
 * all, known or not).
 */
PK_NOINLINE const char *pk_kernel_pointer(struct sink *s, const struct spec *sp, void *ptr,
					 const char *ext)
{
	struct kspec k = kspec_of(sp, 0);

	switch (ext[0]) {
	case 'S':
	case 's':
	case 'B':
		k_symbol(s, ptr, ext, &k);
		break;
	case 'h':
		k_hex_string(s, ptr, ext, &k);
		break;
	case 'M':
	case 'm':
		k_mac(s, ptr, ext, &k);
		break;
	case 'I':
	case 'i':
		k_ip(s, ptr, ext, &k);
		break;
	case 'E':
		k_escaped(s, ptr, ext, &k);
		break;
	case 'U':
		k_uuid(s, ptr, ext, &k);
		break;
	case 'a': {
		uintptr_t v;

		/* phys_addr_t and dma_addr_t are as wide as a pointer here. */
		if (!pk_kcheck(s, ptr, &k))
			break;
		memcpy(&v, ptr, sizeof(v));
		kspecial_hex(s, v, (int)sizeof(v));
		break;
	}
	case 'x':
		kpointer_string(s, (uintptr_t)ptr, k);
		break;
	case 'e':
		if (k_is_err(ptr))
			k_err_ptr(s, ptr, &k);
		else
			kdefault_pointer(s, ptr, &k);
		break;
	case 'u':
	case 'k':
		if (ext[1] != 's')
			pk_kerror(s, "(einval)", &k);
		else if (pk_kcheck(s, ptr, &k))
			kstring(s, ptr, k.prec < 0 ? strlen(ptr) : strnlen(ptr, (size_t)k.prec),
				&k);
		break;
	case 'A':
		pk_kerror(s, "(%pA?)", &k);
		break;
	case 'f':
		if (ext[1] != 'w') {
			pk_kerror(s, "(%pf?)", &k);
			break;
		}
		if (pk_kcheck(s, ptr, &k))
			kdefault_pointer(s, ptr, &k);
		break;
	case 'N': {
		uint64_t v;

		if (!pk_kcheck(s, ptr, &k))
			break;
		if (ext[1] != 'F') {
			pk_kerror(s, "(%pN?)", &k);
			break;
		}
		memcpy(&v, ptr, sizeof(v));
		kspecial_hex(s, v, (int)sizeof(v));
		break;
	}
	case 't':
		if (ext[1] != 'R' && ext[1] != 'T')
			pk_kerror(s, "(%pt?)", &k);
		else
			k_time(s, ptr, ext, &k);
		break;
	case '4':
		k_fourcc(s, ptr, ext, &k);
		break;
	case 'b':
		if (ext[1] == 'l')
			k_bitmap_list(s, ptr, &k);
		else
			k_bitmap(s, ptr, &k);
		break;
	case 'r':
		if (ext[1] == 'a') {
			k_range(s, ptr, &k);
			break;
		}
		/* fall through */
	case 'R':
	case 'd':
	case 'D':
	case 'g':
	case 'G':
		/*
		 * Kernel objects a process does not have (resources, dentries,
		 * files, block devices, page and GFP flags): the kernel checks
		 * the pointer before it reads the object, so NULL and invalid
		 * pointers print as there; a valid one prints as plain %p.
		 */
		if (pk_kcheck(s, ptr, &k))
			kdefault_pointer(s, ptr, &k);
		break;
	default:
		/* %pK (kptr_restrict 0), unknown letters, and the kernel-object ones. */
		kdefault_pointer(s, ptr, &k);
		break;
	}
	while (k_isalnum((unsigned char)*ext))
		ext++;
	return ext;
}

