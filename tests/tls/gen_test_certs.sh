#!/usr/bin/env bash
# Generates a throw-away PKI for TLS tests and local trials (the layout of
# Redis's utils/gen-test-certs.sh): a CA, a server certificate, a client
# certificate, a second server certificate from the same CA (rotation), a
# second CA (a client or server nobody trusts), and DH parameters.
#   tests/tls/gen_test_certs.sh DIR
# Writes DIR/{ca,redis,client,redis2,otherca,other}.{crt,key} and
# DIR/redis.dh. Keys are EC P-256 (made in milliseconds, so a test can make
# its own); nothing is encrypted but DIR/redis-pass.key (pass phrase
# "secret"), for tls-key-file-pass.
set -euo pipefail
dir=${1:?usage: gen_test_certs.sh DIR}
mkdir -p "$dir"
cd "$dir"
days=3650
ca() {  # name subject
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null
  openssl req -x509 -new -nodes -sha256 -key "$1.key" -days "$days" -subj "$2" -out "$1.crt"
}
leaf() {  # name ca serial subject usage
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null
  local ext
  ext=$(mktemp)
  printf 'keyUsage = digitalSignature, keyEncipherment\nsubjectAltName = DNS:localhost, IP:127.0.0.1\n%s\n' "$5" >"$ext"
  openssl req -new -sha256 -key "$1.key" -subj "$4" |
    openssl x509 -req -sha256 -CA "$2.crt" -CAkey "$2.key" -set_serial "$3" -days "$days" \
      -extfile "$ext" -out "$1.crt" 2>/dev/null
  rm -f "$ext"
}
ca ca '/O=ringkv test/CN=Certificate Authority'
ca otherca '/O=ringkv test/CN=Untrusted Authority'
leaf redis ca 101 '/O=ringkv test/CN=Server-only' 'extendedKeyUsage = serverAuth, clientAuth'
leaf redis2 ca 102 '/O=ringkv test/CN=Server-rotated' 'extendedKeyUsage = serverAuth, clientAuth'
leaf client ca 201 '/O=ringkv test/CN=Client-only' 'extendedKeyUsage = clientAuth'
leaf other otherca 301 '/O=ringkv test/CN=Untrusted' 'extendedKeyUsage = serverAuth, clientAuth'
openssl pkey -in redis.key -aes256 -passout pass:secret -out redis-pass.key 2>/dev/null
# DH parameters for tls-dh-params-file (DSA-style generation: fast).
openssl dhparam -dsaparam -out redis.dh 2048 2>/dev/null
