package io.github.redissemaphore.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away certificate authority and a server certificate it signed, for a TLS Redis of a
 * test, as PEM files in a temp directory (deleted at JVM exit): {@link #caCertificate()},
 * {@link #serverCertificate()} (for 127.0.0.1 and localhost, valid for two days) and
 * {@link #serverKey()} (unencrypted PKCS#8).
 *
 * <p>Made with the JDK's own {@code keytool} (no {@code openssl}, no extra library): EC P-256 keys,
 * the CA a CA ({@code BasicConstraints}), the server certificate with the subject alternative names
 * a client checks. The private key leaves its PKCS#12 key store through {@link KeyStore}, as PEM.
 * About two seconds, mostly the JVM start-up of each keytool run.
 */
public final class TestCertificates {

    private static final String STORE_PASSWORD = "test-store-password";
    private static final String VALIDITY_DAYS = "2";
    private static TestCertificates shared;

    private final Path directory;
    private final Path caCertificate;
    private final Path serverCertificate;
    private final Path serverKey;

    private TestCertificates(Path directory) {
        this.directory = directory;
        this.caCertificate = directory.resolve("ca.crt");
        this.serverCertificate = directory.resolve("server.crt");
        this.serverKey = directory.resolve("server.key");
    }

    /**
     * @return one set of certificates for the whole JVM, made on first use: the test classes that
     *         need TLS share it rather than pay the keytool runs again
     */
    public static synchronized TestCertificates shared() {
        if (shared == null) {
            shared = generate();
        }
        return shared;
    }

    /** @return a new CA and server certificate, in a temp directory of their own */
    public static TestCertificates generate() {
        Path directory;
        try {
            directory = Files.createTempDirectory("redis-tls-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temp directory for certificates", e);
        }
        ProcessReaper.deleteAtExit(directory);
        TestCertificates certificates = new TestCertificates(directory);
        certificates.make();
        return certificates;
    }

    private void make() {
        Path caStore = directory.resolve("ca.p12");
        Path serverStore = directory.resolve("server.p12");
        Path request = directory.resolve("server.csr");
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=redis-semaphore test CA", "-ext", "bc:c", "-ext", "ku:c=keyCertSign,cRLSign",
                "-validity", VALIDITY_DAYS, "-keystore", caStore.toString(), "-storetype", "PKCS12");
        keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", caStore.toString(),
                "-file", caCertificate.toString());
        keytool("-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=localhost", "-validity", VALIDITY_DAYS, "-keystore", serverStore.toString(),
                "-storetype", "PKCS12");
        keytool("-certreq", "-alias", "server", "-keystore", serverStore.toString(), "-file", request.toString());
        keytool("-gencert", "-rfc", "-alias", "ca", "-keystore", caStore.toString(), "-infile", request.toString(),
                "-outfile", serverCertificate.toString(), "-validity", VALIDITY_DAYS,
                "-ext", "san=ip:127.0.0.1,dns:localhost", "-ext", "ku:c=digitalSignature,keyAgreement",
                "-ext", "eku=serverAuth");
        writePrivateKey(serverStore, "server", serverKey);
    }

    private static void writePrivateKey(Path store, String alias, Path target) {
        try (InputStream in = Files.newInputStream(store)) {
            KeyStore keyStore = KeyStore.getInstance("PKCS12");
            keyStore.load(in, STORE_PASSWORD.toCharArray());
            Key key = keyStore.getKey(alias, STORE_PASSWORD.toCharArray());
            if (!(key instanceof PrivateKey privateKey) || !"PKCS#8".equals(privateKey.getFormat())) {
                throw new IllegalStateException("no PKCS#8 private key '" + alias + "' in " + store);
            }
            String pem = "-----BEGIN PRIVATE KEY-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                            .encodeToString(privateKey.getEncoded())
                    + "\n-----END PRIVATE KEY-----\n";
            Files.writeString(target, pem, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the private key of " + store, e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the private key of " + store, e);
        }
    }

    private static void keytool(String... arguments) {
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        if (!Files.isExecutable(keytool)) {
            throw new IllegalStateException("no keytool at " + keytool + ": the test certificates need a JDK");
        }
        List<String> command = new ArrayList<>(List.of(keytool.toString()));
        command.addAll(List.of(arguments));
        command.addAll(List.of("-storepass", STORE_PASSWORD, "-noprompt"));
        // keytool's JVM lives a second: the quick compiler and collector alone start it for less CPU
        command.addAll(List.of("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"));
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            process.getOutputStream().close();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("keytool " + arguments[0] + " did not finish");
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException("keytool " + String.join(" ", arguments) + " failed with code "
                        + process.exitValue() + ": " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + keytool, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running keytool", e);
        }
    }

    /** @return the CA's certificate (PEM): what a client trusts */
    public Path caCertificate() {
        return caCertificate;
    }

    /** @return the server's certificate (PEM), signed by the CA, for 127.0.0.1 and localhost */
    public Path serverCertificate() {
        return serverCertificate;
    }

    /** @return the server's private key (PEM, unencrypted PKCS#8) */
    public Path serverKey() {
        return serverKey;
    }

    /** @return the directory of these files */
    public Path directory() {
        return directory;
    }

    @Override
    public String toString() {
        return "TestCertificates[" + directory + "]";
    }
}
