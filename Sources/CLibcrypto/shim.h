// The system's libcrypto (OpenSSL), used on Linux for the SHA-256 digests of firmware images.
#include <openssl/evp.h>
