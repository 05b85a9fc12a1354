package io.github.redissemaphore.test;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.List;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/** The test support's servers with arguments of a test's own: ACL users, TLS. */
@Tag("redis-compat")
class RedisServerOptionsTest {

    @Test
    @SuppressWarnings("unchecked")
    void extraArgumentsApplyAndSurviveARestart() {
        try (RedisServer server = RedisServers.start(List.of("--user", "probe", "on", ">probe-pw", "~probe:*", "+ping"))) {
            assertThat((List<Object>) server.adminCommand("ACL", "USERS")).contains("probe", "default");
            server.stop();
            server.start();
            assertThat((List<Object>) server.adminCommand("ACL", "USERS")).contains("probe");
            assertThatIllegalStateException().isThrownBy(server::tlsPort).withMessageContaining("no TLS port");
        }
    }

    @Test
    void aTlsServerAnswersOnItsTlsPortWithACertificateTheTestCaSigned() throws Exception {
        TestCertificates certificates = TestCertificates.shared();
        RedisServer server;
        try {
            server = RedisServers.startTls(certificates, List.of());
        } catch (RedisServers.TlsUnsupportedException e) {
            Assumptions.abort("the redis-server at hand cannot serve TLS: " + e.getMessage());
            return;
        }
        try (server) {
            assertThat(server.tlsPort()).isNotEqualTo(server.port());
            // the admin calls keep using the plain port
            assertThat(server.adminCommand("PING")).isEqualTo("PONG");

            SSLContext tls = SSLContext.getInstance("TLS");
            tls.init(null, trusting(certificates).getTrustManagers(), null);
            try (SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket("localhost", server.tlsPort())) {
                SSLParameters parameters = socket.getSSLParameters();
                // checks the certificate's names against the host, as a Redis client does
                parameters.setEndpointIdentificationAlgorithm("HTTPS");
                socket.setSSLParameters(parameters);
                socket.setSoTimeout(5000);
                OutputStream out = socket.getOutputStream();
                out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                        StandardCharsets.US_ASCII));
                assertThat(in.readLine()).isEqualTo("+PONG");
            }
        }
    }

    private static TrustManagerFactory trusting(TestCertificates certificates) throws Exception {
        KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
        trusted.load(null, null);
        try (InputStream in = Files.newInputStream(certificates.caCertificate())) {
            trusted.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(trusted);
        return factory;
    }
}
