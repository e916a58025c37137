// SPDX-License-Identifier: MIT
/*
 * test_tls_abi.c - the OpenSSL 3 values src/forward/tls.c uses without
 * OpenSSL's header (src/forward/tls_abi.h) are the header's, when the
 * header is installed (Debian: libssl-dev); without it the test says so
 * and is skipped.
 */
#include <stdio.h>

#include "forward/tls_abi.h"
#include "testutil.h"

#if defined(__has_include)
#if __has_include(<openssl/ssl.h>)
#include <openssl/opensslv.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#define HAVE_OPENSSL_HEADER 1
#endif
#endif

static void test_values(void **state)
{
	(void)state;
#ifdef HAVE_OPENSSL_HEADER
	assert_int_equal(OPENSSL_VERSION_MAJOR, 3);
	assert_int_equal(OSSL_SSL_VERIFY_PEER, SSL_VERIFY_PEER);
	assert_int_equal(OSSL_SSL_FILETYPE_PEM, SSL_FILETYPE_PEM);
	assert_int_equal(OSSL_SSL_CTRL_SET_TLSEXT_HOSTNAME, SSL_CTRL_SET_TLSEXT_HOSTNAME);
	assert_int_equal(OSSL_TLSEXT_NAMETYPE_host_name, TLSEXT_NAMETYPE_host_name);
	assert_int_equal(OSSL_SSL_CTRL_SET_MIN_PROTO_VERSION, SSL_CTRL_SET_MIN_PROTO_VERSION);
	assert_int_equal(OSSL_TLS1_2_VERSION, TLS1_2_VERSION);
	assert_int_equal(OSSL_TLS1_3_VERSION, TLS1_3_VERSION);
	assert_int_equal(OSSL_SSL_ERROR_SSL, SSL_ERROR_SSL);
	assert_int_equal(OSSL_SSL_ERROR_WANT_READ, SSL_ERROR_WANT_READ);
	assert_int_equal(OSSL_SSL_ERROR_WANT_WRITE, SSL_ERROR_WANT_WRITE);
	assert_int_equal(OSSL_SSL_ERROR_SYSCALL, SSL_ERROR_SYSCALL);
	assert_int_equal(OSSL_SSL_ERROR_ZERO_RETURN, SSL_ERROR_ZERO_RETURN);
	assert_int_equal(OSSL_X509_V_OK, X509_V_OK);
	assert_int_equal(OSSL_OPENSSL_INIT_LOAD_CRYPTO_STRINGS, OPENSSL_INIT_LOAD_CRYPTO_STRINGS);
	assert_int_equal(OSSL_OPENSSL_INIT_NO_ATEXIT, OPENSSL_INIT_NO_ATEXIT);
	assert_int_equal(OSSL_OPENSSL_INIT_LOAD_SSL_STRINGS, OPENSSL_INIT_LOAD_SSL_STRINGS);
#else
	printf("test_tls_abi: <openssl/ssl.h> not installed (Debian: libssl-dev): not compared\n");
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
