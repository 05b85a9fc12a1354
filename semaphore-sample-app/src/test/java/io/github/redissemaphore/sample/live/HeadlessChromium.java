package io.github.redissemaphore.sample.live;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Debian's Chromium and its driver, headless, for tests of the live view. Both paths are given to
 * Selenium, so its Selenium Manager downloads nothing; the flags keep Chromium off the network it
 * would otherwise call (updates, sync, QUIC), which a closed machine refuses.
 */
final class HeadlessChromium {

    static final Path BROWSER = Path.of("/usr/bin/chromium");
    static final Path DRIVER = Path.of("/usr/bin/chromedriver");

    private HeadlessChromium() {
    }

    /** Skips the calling test, saying how to install them, when Chromium or its driver is missing. */
    static void assumeInstalled() {
        assumeTrue(Files.isExecutable(BROWSER) && Files.isExecutable(DRIVER),
                "The live view's browser test needs Chromium and its driver at " + BROWSER + " and " + DRIVER
                        + "; install them with: apt-get install -y chromium chromium-driver (Debian/Ubuntu)");
    }

    /** @return a browser with a window of {@code width} x {@code height} and a fresh profile in the empty {@code profile} */
    static ChromeDriver start(int width, int height, Path profile) {
        ChromeOptions options = new ChromeOptions()
                .setBinary(BROWSER.toFile())
                .addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--user-data-dir=" + profile, "--window-size=" + width + "," + height);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(DRIVER.toString()))
                .usingAnyFreePort()
                .withTimeout(Duration.ofSeconds(60))
                .build();
        return new ChromeDriver(service, options);
    }
}
