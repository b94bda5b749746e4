// librstorm-civetweb-crypto.so: no code, SONAME "libcrypto.so" and a
// dependency on libcrypto.so.3. civetweb dlopen()s the unversioned
// "libcrypto.so", which only libssl-dev installs; with this library loaded
// first, civetweb's dlopen() returns it and finds OpenSSL's functions through
// its dependency. See ssl_shim.cpp.
