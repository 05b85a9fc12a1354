import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * No silent skips in CI: {@code java .ci/SkipCheck.java <run> <since>} reads the surefire reports
 * ({@code <module>/target/surefire-reports/TEST-*.xml}) written after the file {@code since} was touched,
 * that is by the Maven run that .ci/run started after it, and fails, naming each test and its skip
 * message, on a skipped test (an assumption that failed, an abort, {@code @Disabled}) that
 * {@code .ci/allowed-skips} does not allow in that run. With {@code --every-module} (a run of every
 * module's tests) it also fails on a module that has test sources ({@code src/test/java}) but wrote no report. Only the JDK is needed (Java 11+ runs a
 * source file like this one).
 */
class SkipCheck {

    /** One line of .ci/allowed-skips: the run (or *), SimpleClassName#method (method may be *), why. */
    record Allowed(String run, String test, String why) {

        boolean allows(String run, String className, String method) {
            String[] parts = test.split("#", 2);
            return (this.run.equals("*") || this.run.equals(run)) && parts[0].equals(className)
                    && (parts[1].equals("*") || parts[1].equals(method));
        }
    }

    public static void main(String[] args) throws Exception {
        String run = args[0];
        long since = new File(args[1]).lastModified();
        List<Allowed> allowed = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of(".ci/allowed-skips"))) {
            String[] columns = line.strip().split("\\s+", 3);
            if (line.isBlank() || line.strip().startsWith("#")) {
                continue;
            }
            if (columns.length < 3 || !columns[1].contains("#")) {
                throw new IllegalArgumentException(".ci/allowed-skips: want <run> <Class#method> <why>, got: " + line);
            }
            allowed.add(new Allowed(columns[0], columns[1], columns[2]));
        }

        List<Path> reports;
        try (Stream<Path> modules = Files.list(Path.of("."))) {
            reports = modules.map(module -> module.resolve("target/surefire-reports")).filter(Files::isDirectory)
                    .flatMap(SkipCheck::reports).filter(report -> report.toFile().lastModified() >= since)
                    .sorted().toList();
        }
        if (reports.isEmpty()) {
            System.out.printf("Skip check (%s) FAILED: the run wrote no surefire report; did its tests run?%n", run);
            System.exit(1);
        }
        if (args.length > 2 && args[2].equals("--every-module")) {
            // A run of every module's tests: a module with test sources (its own, or others' it
            // compiles) but no report of this run lost its tests on the way (a build step that
            // deleted them, a skip flag), all at once.
            List<String> silent = new ArrayList<>();
            try (Stream<Path> modules = Files.list(Path.of("."))) {
                for (Path module : modules.sorted().toList()) {
                    if (Files.isDirectory(module.resolve("src/test/java"))
                            && reports.stream().noneMatch(report -> report.startsWith(module))) {
                        silent.add(module.getFileName().toString());
                    }
                }
            }
            if (!silent.isEmpty()) {
                System.out.printf("Skip check (%s) FAILED: these modules have tests but ran none: %s%n", run,
                        silent);
                System.exit(1);
            }
        }
        int tests = 0;
        TreeSet<String> allowedSkips = new TreeSet<>();
        List<String> refused = new ArrayList<>();
        for (Path report : reports) {
            Element suite = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(report.toFile())
                    .getDocumentElement();
            NodeList cases = suite.getElementsByTagName("testcase");
            if (cases.getLength() == 0) {
                // A class aborted in @BeforeAll (an assumption, Assumptions.abort) is reported as a
                // suite of no test, without its reason.
                String className = simpleName(suite.getAttribute("name"));
                if (allowed.stream().anyMatch(a -> a.allows(run, className, "*"))) {
                    allowedSkips.add(className + "#*");
                } else {
                    refused.add(className + "#*: ran none of its tests, so it was skipped as a whole (an assumption"
                            + " or abort in @BeforeAll; surefire keeps no reason)  [" + report + "]");
                }
                continue;
            }
            for (int i = 0; i < cases.getLength(); i++) {
                tests++;
                Element testCase = (Element) cases.item(i);
                NodeList skipped = testCase.getElementsByTagName("skipped");
                if (skipped.getLength() == 0) {
                    continue;
                }
                String className = simpleName(testCase.getAttribute("classname"));
                String method = testCase.getAttribute("name").replaceAll("[(\\[].*", "");
                String test = className + "#" + method;
                String message = message((Element) skipped.item(0));
                if (allowed.stream().anyMatch(a -> a.allows(run, className, method))) {
                    allowedSkips.add(test);
                } else {
                    refused.add(test + ": " + message + "  [" + report + "]");
                }
            }
        }
        System.out.printf("Skip check (%s): %d tests in %d surefire reports, %d allowed skips %s%n", run, tests,
                reports.size(), allowedSkips.size(), allowedSkips);
        if (!refused.isEmpty()) {
            System.out.printf("Skip check (%s) FAILED: %d tests skipped that .ci/allowed-skips does not allow in"
                    + " this run (make them run in CI, or add a line there saying why not):%n", run, refused.size());
            refused.forEach(line -> System.out.println("  SKIPPED " + line));
            System.exit(1);
        }
    }

    /** @return e.g. RestrictedWaitingTest of io.github.redissemaphore.core.RestrictedWaitingTest[2] */
    private static String simpleName(String className) {
        return className.replaceAll("\\[.*", "").replaceAll(".*\\.", "");
    }

    /** @return the skip's message: the attribute, else the exception's text before its stack trace */
    private static String message(Element skipped) {
        String message = skipped.getAttribute("message");
        if (message.isBlank()) {
            message = skipped.getTextContent().split("\n\\s*at ", 2)[0];
        }
        message = message.strip().replaceAll("\\s+", " ");
        return message.isEmpty() ? "(no message)" : message;
    }

    private static Stream<Path> reports(Path directory) {
        try {
            return Files.list(directory).filter(p -> p.getFileName().toString().matches("TEST-.*\\.xml")).toList()
                    .stream();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
