package io.github.redissemaphore.starter;

import io.github.redissemaphore.aspect.DistributedSemaphoreAspect;
import io.github.redissemaphore.core.internal.DefaultRedisSemaphore;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No {@code synchronized} method or block anywhere in the library's main code (the core and the
 * starter), read from the compiled classes: up to Java 23, a virtual thread that waits for Redis,
 * or for anything, inside a monitor pins its carrier thread, and a few such callers stall every
 * virtual thread of the application. The library uses {@code java.util.concurrent} locks
 * instead, everywhere and without exception, so the rule is simple to keep. This check runs on
 * every Java, Java 17 included, where virtual threads cannot be tried.
 */
class NoMonitorsTest {

    @Test
    void theLibraryHoldsNoMonitor() throws Exception {
        List<String> monitors = new ArrayList<>();
        List<Path> scanned = new ArrayList<>();
        for (Class<?> ofModule : List.of(DefaultRedisSemaphore.class, DistributedSemaphoreAspect.class)) {
            forEachClass(ofModule, (name, bytes) -> {
                scanned.add(Path.of(name));
                new ClassReader(bytes).accept(new MonitorFinder(name, monitors), ClassReader.SKIP_DEBUG);
            });
        }
        assertThat(scanned).as("classes read").hasSizeGreaterThan(20)
                .contains(Path.of("io/github/redissemaphore/core/internal/DefaultRedisSemaphore.class"),
                        Path.of("io/github/redissemaphore/aspect/DistributedSemaphoreAspect.class"));
        assertThat(monitors).as("synchronized methods and blocks; use a ReentrantLock").isEmpty();
    }

    /** Reads every class of the jar or directory {@code ofModule} was loaded from. */
    private static void forEachClass(Class<?> ofModule, ClassFileConsumer consumer)
            throws IOException, URISyntaxException {
        Path location = Path.of(ofModule.getProtectionDomain().getCodeSource().getLocation().toURI());
        if (Files.isDirectory(location)) {
            read(location, consumer);
        } else {
            try (FileSystem jar = FileSystems.newFileSystem(location)) {
                read(jar.getPath("/"), consumer);
            }
        }
    }

    private static void read(Path root, ClassFileConsumer consumer) throws IOException {
        List<Path> classes;
        try (Stream<Path> files = Files.walk(root)) {
            classes = files.filter(file -> file.toString().endsWith(".class")).toList();
        }
        for (Path file : classes) {
            try (InputStream in = Files.newInputStream(file)) {
                String name = root.relativize(file).toString().replace('\\', '/');
                consumer.accept(name, in.readAllBytes());
            }
        }
    }

    @FunctionalInterface
    private interface ClassFileConsumer {
        void accept(String name, byte[] bytes) throws IOException;
    }

    /** Notes each synchronized method and each method that enters a monitor (a synchronized block). */
    private static final class MonitorFinder extends ClassVisitor {

        private final String className;
        private final List<String> monitors;

        MonitorFinder(String className, List<String> monitors) {
            super(Opcodes.ASM9);
            this.className = className;
            this.monitors = monitors;
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                                         String[] exceptions) {
            String method = className + " " + name + descriptor;
            if ((access & Opcodes.ACC_SYNCHRONIZED) != 0) {
                monitors.add("synchronized method " + method);
            }
            return new MethodVisitor(Opcodes.ASM9) {
                @Override
                public void visitInsn(int opcode) {
                    if (opcode == Opcodes.MONITORENTER) {
                        monitors.add("synchronized block in " + method);
                    }
                }
            };
        }
    }
}
