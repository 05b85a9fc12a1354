package io.github.redissemaphore.test;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Locates a {@code redis-server} executable: on the PATH, or else the one shipped inside the
 * {@code com.github.codemonstur:embedded-redis} jar, extracted to a temp file. Both are then run the
 * same way by {@link RedisProcess}, with our own arguments, so the fallback exercises the same code.
 *
 * <p>Which sources are allowed is the {@link Choice} set by {@code redis.test.binary} /
 * {@code REDIS_TEST_BINARY} (see {@link RedisServers}).
 */
final class RedisBinary {

    /** Which executable the test support may use; see {@link #configured()}. */
    enum Choice {
        /** REDIS_URL, then Docker, then PATH, then the embedded binary. */
        AUTO,
        /** Only a {@code redis-server} on the PATH. */
        PATH,
        /** Only the binary inside the embedded-redis jar (skips REDIS_URL, Docker and PATH). */
        EMBEDDED;

        /**
         * @return the choice of system property {@code redis.test.binary}, else of environment variable
         *         {@code REDIS_TEST_BINARY}, else {@link #AUTO}
         */
        static Choice configured() {
            String value = System.getProperty("redis.test.binary");
            if (value == null || value.isBlank()) {
                value = System.getenv("REDIS_TEST_BINARY");
            }
            if (value == null || value.isBlank()) {
                return AUTO;
            }
            try {
                return valueOf(value.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "redis.test.binary / REDIS_TEST_BINARY must be auto, path or embedded, not '" + value + "'", e);
            }
        }
    }

    private static final String EXECUTABLE = "redis-server";
    /** Found through its Maven metadata, so no class of that library is needed. */
    private static final String EMBEDDED_MARKER = "META-INF/maven/com.github.codemonstur/embedded-redis/pom.properties";
    /** e.g. redis-server-6.2.6-v5-linux-amd64, redis-server-6.2.7-linux-arm64. */
    private static final Pattern EMBEDDED_NAME =
            Pattern.compile("redis-server-(\\d+)\\.(\\d+)\\.(\\d+)(?:-v\\d+)?-(linux|darwin)-(amd64|arm64|386)");
    private static final Pattern VERSION = Pattern.compile("v=(\\d+)\\.(\\d+)\\.(\\d+)");

    /** Resolving runs {@code --version} and may extract 10 MB: once per JVM and choice is enough. */
    private static final Map<Choice, RedisBinary> RESOLVED = new ConcurrentHashMap<>();

    private final Path executable;
    private final String origin;
    private final String version;
    private final int majorVersion;

    private RedisBinary(Path executable, String origin) {
        this.executable = executable;
        this.origin = origin;
        Matcher matcher = VERSION.matcher(versionOutput(executable));
        if (!matcher.find()) {
            throw new IllegalStateException("cannot tell the version of " + executable);
        }
        this.version = matcher.group(1) + "." + matcher.group(2) + "." + matcher.group(3);
        this.majorVersion = Integer.parseInt(matcher.group(1));
    }

    /** @return the binary for the configured choice ({@link Choice#AUTO} means PATH, then embedded) */
    static RedisBinary resolve() {
        return resolve(Choice.configured());
    }

    /** @return the binary allowed by {@code choice}; fails with a hint when there is none */
    static RedisBinary resolve(Choice choice) {
        return RESOLVED.computeIfAbsent(choice, RedisBinary::find);
    }

    private static RedisBinary find(Choice choice) {
        if (choice != Choice.EMBEDDED) {
            Optional<Path> onPath = onPath(System.getenv("PATH"));
            if (onPath.isPresent()) {
                return new RedisBinary(onPath.get(), "PATH");
            }
            if (choice == Choice.PATH) {
                throw new IllegalStateException("redis.test.binary=path but no " + EXECUTABLE + " on the PATH");
            }
        }
        return new RedisBinary(extractEmbedded(), "embedded-redis jar");
    }

    /**
     * Walks the PATH ourselves (rather than letting ProcessBuilder search it), so a PATH without
     * redis-server really falls through to the jar.
     */
    static Optional<Path> onPath(String path) {
        if (path == null) {
            return Optional.empty();
        }
        for (String directory : path.split(Pattern.quote(File.pathSeparator))) {
            if (directory.isBlank()) {
                continue;
            }
            Path candidate = Paths.get(directory, EXECUTABLE);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    private static Path extractEmbedded() {
        String resource = embeddedResourceName();
        try (InputStream in = RedisBinary.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("resource " + resource + " vanished from the class path");
            }
            Path directory = Files.createTempDirectory("redis-binary-");
            Path target = directory.resolve(resource);
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
            if (!target.toFile().setExecutable(true, true)) {
                throw new IllegalStateException("cannot make " + target + " executable");
            }
            ProcessReaper.deleteAtExit(directory);
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract " + resource + " from the embedded-redis jar", e);
        }
    }

    /** The newest binary in the jar for this OS and CPU (linux and mac only). */
    private static String embeddedResourceName() {
        String os = os();
        String arch = arch();
        List<String> names = embeddedJarEntries();
        return names.stream()
                .map(EMBEDDED_NAME::matcher)
                .filter(Matcher::matches)
                .filter(m -> m.group(4).equals(os) && m.group(5).equals(arch))
                .max(Comparator.<Matcher>comparingInt(m -> Integer.parseInt(m.group(1)))
                        .thenComparingInt(m -> Integer.parseInt(m.group(2)))
                        .thenComparingInt(m -> Integer.parseInt(m.group(3))))
                .map(Matcher::group)
                .orElseThrow(() -> new IllegalStateException(
                        "the embedded-redis jar has no redis-server for " + os + "-" + arch + " among " + names));
    }

    private static List<String> embeddedJarEntries() {
        URL marker = RedisBinary.class.getClassLoader().getResource(EMBEDDED_MARKER);
        if (marker == null) {
            throw new IllegalStateException("no redis-server on the PATH (or redis.test.binary=embedded) and "
                    + "com.github.codemonstur:embedded-redis is not on the test class path: add it, or install Redis");
        }
        List<String> names = new ArrayList<>();
        try {
            if ("jar".equals(marker.getProtocol())) {
                JarURLConnection connection = (JarURLConnection) marker.openConnection();
                connection.setUseCaches(false);
                try (JarFile jar = connection.getJarFile()) {
                    for (Enumeration<JarEntry> entries = jar.entries(); entries.hasMoreElements(); ) {
                        names.add(entries.nextElement().getName());
                    }
                }
            } else {
                // An exploded copy of the jar: its root is four levels above the marker.
                Path root = Paths.get(marker.toURI()).getParent().getParent().getParent().getParent();
                try (Stream<Path> files = Files.list(root)) {
                    files.forEach(file -> names.add(file.getFileName().toString()));
                }
            }
        } catch (IOException | URISyntaxException e) {
            throw new IllegalStateException("cannot list the embedded-redis jar at " + marker, e);
        }
        return names;
    }

    private static String os() {
        String name = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        if (name.contains("linux")) {
            return "linux";
        }
        if (name.contains("mac") || name.contains("darwin")) {
            return "darwin";
        }
        throw new IllegalStateException("no redis-server on the PATH and the embedded one only runs on linux and mac, "
                + "not " + name + ": install Redis or set REDIS_URL");
    }

    private static String arch() {
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        switch (arch) {
            case "amd64":
            case "x86_64":
                return "amd64";
            case "aarch64":
            case "arm64":
                return "arm64";
            case "x86":
            case "i386":
            case "i686":
                return "386";
            default:
                throw new IllegalStateException("no embedded redis-server for CPU " + arch);
        }
    }

    private static String versionOutput(Path executable) {
        try {
            Process process = new ProcessBuilder(executable.toString(), "--version").redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(executable + " --version did not return");
            }
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + executable, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + executable + " --version", e);
        }
    }

    /** @return the executable file */
    Path executable() {
        return executable;
    }

    /** @return e.g. "7.0.15" */
    String version() {
        return version;
    }

    /**
     * Arguments every process of this binary gets besides port and directory. DEBUG (used by
     * {@link RedisServer#debugSleep}) is off by default since Redis 7 and must be enabled at start;
     * 6.x has it always on and rejects the unknown option, hence the version check.
     */
    List<String> versionSpecificArguments() {
        return majorVersion >= 7 ? List.of("--enable-debug-command", "yes") : List.of();
    }

    @Override
    public String toString() {
        return "redis-server " + version + " (" + origin + ": " + executable + ")";
    }
}
