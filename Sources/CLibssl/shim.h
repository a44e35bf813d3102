// The system's libssl (OpenSSL), used on Linux for https: TLS over a socket the caller polls.
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

// What OpenSSL spells as macros, which Swift does not import.

/// Sends `name` as the server name (SNI) of the handshake.
static inline long readerkit_ssl_set_server_name(SSL *ssl, const char *name) {
  return SSL_set_tlsext_host_name(ssl, name);
}

/// Refuses anything older than TLS 1.2.
static inline int readerkit_ssl_ctx_require_tls12(SSL_CTX *context) {
  return (int)SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
}

/// Reads a close without close_notify as the end of the stream (the HTTP reader checks that a body
/// announced with a length or in chunks is complete), and lets a write be resumed from another buffer
/// address.
static inline void readerkit_ssl_ctx_set_stream_options(SSL_CTX *context) {
  SSL_CTX_set_options(context, SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(context, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}
