#include "actors/actor_credentials.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <memory>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace tagflow::actors {
namespace {

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Certificate = std::unique_ptr<X509, decltype(&X509_free)>;
using File = std::unique_ptr<FILE, decltype(&std::fclose)>;

[[noreturn]] void fail(const std::string& what) {
  std::string detail;
  while (const unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof(text));
    detail += std::string(detail.empty() ? ": " : "; ") + text;
  }
  throw ActorCredentialError(what + detail);
}

Key make_key() {
  EVP_PKEY_CTX* context = EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr);
  EVP_PKEY* key = nullptr;
  const bool ok = context != nullptr && EVP_PKEY_keygen_init(context) == 1 &&
                  EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 &&
                  EVP_PKEY_keygen(context, &key) == 1;
  EVP_PKEY_CTX_free(context);
  if (!ok) fail("cannot generate a P-256 key");
  return Key(key, &EVP_PKEY_free);
}

void add_extension(X509* certificate, X509V3_CTX& context, int nid, const char* value) {
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  if (extension == nullptr || X509_add_ext(certificate, extension, -1) != 1) {
    X509_EXTENSION_free(extension);
    fail("cannot add a certificate extension");
  }
  X509_EXTENSION_free(extension);
}

/// A certificate for `key` named `name`, signed by `issuer` (nullptr: self-signed CA).
Certificate make_certificate(EVP_PKEY* key, const std::string& name, X509* issuer,
                             EVP_PKEY* issuer_key, long serial) {
  Certificate certificate(X509_new(), &X509_free);
  if (!certificate) fail("cannot allocate a certificate");
  X509* x = certificate.get();
  const auto* cn = reinterpret_cast<const unsigned char*>(name.c_str());
  if (X509_set_version(x, 2) != 1 || ASN1_INTEGER_set(X509_get_serialNumber(x), serial) != 1 ||
      X509_gmtime_adj(X509_getm_notBefore(x), -3600) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(x), 10L * 365 * 24 * 3600) == nullptr ||
      X509_set_pubkey(x, key) != 1 ||
      X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_UTF8, cn, -1, -1, 0) !=
          1 ||
      X509_set_issuer_name(x, X509_get_subject_name(issuer != nullptr ? issuer : x)) != 1) {
    fail("cannot fill the certificate of " + name);
  }
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer != nullptr ? issuer : x, x, nullptr, nullptr, 0);
  if (issuer == nullptr) {
    add_extension(x, context, NID_basic_constraints, "critical,CA:TRUE");
    add_extension(x, context, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_extension(x, context, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(x, context, NID_ext_key_usage, "serverAuth,clientAuth");
  }
  if (X509_sign(x, issuer_key != nullptr ? issuer_key : key, EVP_sha256()) <= 0) {
    fail("cannot sign the certificate of " + name);
  }
  return certificate;
}

File open_for_writing(const std::filesystem::path& path, mode_t mode) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  // At most `mode`, narrowed further by the process's umask (a Slurm job's `umask 077`).
  const auto narrowing = static_cast<mode_t>(0777 & ~mode);
  const mode_t old_mask = ::umask(narrowing);
  ::umask(static_cast<mode_t>(old_mask | narrowing));
  File file(std::fopen(path.c_str(), "wx"), &std::fclose);
  ::umask(old_mask);
  if (!file) throw ActorCredentialError("cannot write " + path.string());
  return file;
}

void write_certificate(const std::filesystem::path& path, X509* certificate) {
  File file = open_for_writing(path, 0644);
  if (PEM_write_X509(file.get(), certificate) != 1) fail("cannot write " + path.string());
}

void write_key(const std::filesystem::path& path, EVP_PKEY* key) {
  File file = open_for_writing(path, 0600);
  if (PEM_write_PrivateKey(file.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    fail("cannot write " + path.string());
  }
}

}  // namespace

void mint_actor_credentials(const std::filesystem::path& keys_dir,
                            const std::vector<std::string>& names) {
  const std::filesystem::path dir = keys_dir / "actor";
  std::error_code error;
  std::filesystem::remove_all(dir, error);
  std::filesystem::create_directories(dir, error);
  if (!error) {
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, error);
  }
  if (error) throw ActorCredentialError("cannot create " + dir.string() + ": " + error.message());
  const Key ca_key = make_key();
  const Certificate ca = make_certificate(ca_key.get(), "tagflow cluster CA", nullptr, nullptr, 1);
  write_certificate(dir / "ca.crt", ca.get());
  long serial = 2;
  for (const std::string& name : names) {
    const Key key = make_key();
    const Certificate certificate =
        make_certificate(key.get(), name, ca.get(), ca_key.get(), serial++);
    write_certificate(dir / (name + ".crt"), certificate.get());
    write_key(dir / (name + ".key"), key.get());
  }
}

ActorCredentials actor_credentials(const std::filesystem::path& keys_dir, const std::string& name) {
  const std::filesystem::path dir = keys_dir / "actor";
  ActorCredentials c{(dir / "ca.crt").string(), (dir / (name + ".crt")).string(),
                     (dir / (name + ".key")).string()};
  for (const std::string* file : {&c.ca_file, &c.certificate_file, &c.key_file}) {
    if (!std::filesystem::is_regular_file(*file)) {
      throw ActorCredentialError("no actor-mode credential " + *file +
                                 " (tagflow keys generate DIR --config FILE writes them)");
    }
  }
  return c;
}

}  // namespace tagflow::actors
