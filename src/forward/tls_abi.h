// SPDX-License-Identifier: MIT
/*
 * tls_abi.h - the values of OpenSSL 3's ABI that tls.c uses, written out so
 * that the build needs no OpenSSL header (they do not change within 3.x).
 * tests/test_tls_abi.c checks each against <openssl/ssl.h> when that is
 * installed.
 */
#ifndef PRINTK_FORWARD_TLS_ABI_H
#define PRINTK_FORWARD_TLS_ABI_H

/* ssl.h, tls1.h, x509_vfy.h */
#define OSSL_SSL_VERIFY_PEER		  0x01
#define OSSL_SSL_FILETYPE_PEM		  1
#define OSSL_SSL_CTRL_SET_TLSEXT_HOSTNAME 55
#define OSSL_TLSEXT_NAMETYPE_host_name	  0
#define OSSL_SSL_CTRL_SET_MIN_PROTO_VERSION 123
#define OSSL_TLS1_2_VERSION		  0x0303
#define OSSL_TLS1_3_VERSION		  0x0304
#define OSSL_SSL_ERROR_SSL		  1
#define OSSL_SSL_ERROR_WANT_READ	  2
#define OSSL_SSL_ERROR_WANT_WRITE	  3
#define OSSL_SSL_ERROR_SYSCALL		  5
#define OSSL_SSL_ERROR_ZERO_RETURN	  6
#define OSSL_X509_V_OK			  0
/* crypto.h, ssl.h: OPENSSL_init_ssl() options */
#define OSSL_OPENSSL_INIT_LOAD_CRYPTO_STRINGS 0x00000002L
#define OSSL_OPENSSL_INIT_NO_ATEXIT	      0x00080000L
#define OSSL_OPENSSL_INIT_LOAD_SSL_STRINGS    0x00200000L


#endif
