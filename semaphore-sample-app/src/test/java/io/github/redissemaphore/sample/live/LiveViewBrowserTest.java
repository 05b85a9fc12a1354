package io.github.redissemaphore.sample.live;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.sample.SampleApplication;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The live view in a real browser, against a fleet of two instances on the test support's Redis
 * (as the demo runs them: one JVM, one Redis, their own key prefix): a person presses the buttons
 * and the page shows the queue forming behind the limit and draining, holders from both
 * instances, and a held permit force-released. The page is read the way a person reads it, from
 * the DOM, many times a second; at no reading may it show more holders than permits.
 *
 * <p>Leaves a screenshot at {@code target/live-view.png} (the README's {@code docs/live-view.png}
 * is a copy of one).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LiveViewBrowserTest {

    private static final int PERMITS = 3;
    /** The page's defaults: what a person gets by pressing the buttons. */
    private static final int REPORT_CALLS = 30;
    /** The reports' max-waiters in the sample's application.yml. */
    private static final int MAX_WAITERS = 12;
    private static final int EXPORT_CALLS = 4;
    private static final Path SCREENSHOT = Path.of("target", "live-view.png");
    /** Generous for a loaded 2-core machine; the calls themselves wait at most 10 s for a permit. */
    private static final Duration PHASE = Duration.ofSeconds(90);
    private static final Pattern TOKEN = Pattern.compile("fencing token (\\d+)");

    /** What the page shows of the reports semaphore and the bursts at one moment. */
    private static final String READ_PAGE = """
            const card = document.querySelector('[data-semaphore="reports"]');
            const bursts = document.querySelector('#bursts').dataset;
            if (!card || bursts.fired === undefined) return null;
            return {
              used: Number(card.dataset.used), limit: Number(card.dataset.limit),
              waiters: Number(card.dataset.waiters), full: card.dataset.full === 'true',
              waitingText: card.querySelector('.figures .waiting').textContent,
              holderRows: card.querySelectorAll('.holders tbody tr').length,
              heldSegments: card.querySelectorAll('.bar .segment.held').length,
              queueRows: card.querySelectorAll('.waiters tbody tr').length,
              firstInQueue: card.querySelector('.waiters tbody tr td')?.textContent ?? '',
              holderInstances: [...card.querySelectorAll('.holders tbody tr .chip')].map(chip => chip.textContent),
              instances: Number(document.querySelector('#fleet').dataset.instances || 0),
              fired: Number(bursts.fired), served: Number(bursts.served), rejected: Number(bursts.rejected),
              failed: Number(bursts.failed), inProgress: Number(bursts.inProgress),
            };""";

    private ConfigurableApplicationContext instanceA;
    private ConfigurableApplicationContext instanceB;
    private ChromeDriver browser;
    /** Static: JUnit fills static temp dirs before {@code @BeforeAll}, instance ones only before each test. */
    @TempDir
    static Path browserProfile;

    /** Every reading of the page in this test, for the final checks. */
    private final AtomicLong readings = new AtomicLong();
    private final Set<String> holderInstancesSeen = new HashSet<>();
    private long mostWaiters;
    /** Whether a reading showed the reports' queue full. */
    private boolean sawFull;

    @BeforeAll
    void startFleetAndBrowser() {
        HeadlessChromium.assumeInstalled();
        assertThat(browserProfile).isNotNull();
        RedisServer redis = RedisServers.shared();
        String keyPrefix = redis.keyPrefix() + ":live-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        instanceA = start("A", redis, keyPrefix);
        instanceB = start("B", redis, keyPrefix);
        browser = HeadlessChromium.start(1280, 1280, browserProfile);
    }

    @AfterAll
    void stopFleetAndBrowser() {
        if (browser != null) {
            browser.quit();
        }
        if (instanceB != null) {
            instanceB.close();
        }
        if (instanceA != null) {
            instanceA.close();
        }
    }

    @Test
    void aBurstQueuesBehindTheLimitDrainsAndAHeldPermitCanBeForceReleased() throws IOException {
        browser.get("http://localhost:" + port(instanceA) + "/");
        await().atMost(PHASE).until(() -> read() != null && read().get("instances").equals(2L));

        // Exports of one tenant: two run (its permits), the others queue behind them.
        browser.findElement(By.cssSelector("#burst-exports button")).click();
        awaitPage(page -> page.get("fired").equals((long) EXPORT_CALLS) && page.get("inProgress").equals(0L));

        // A burst of reports: the queue forms behind the limit, then drains.
        browser.findElement(By.cssSelector("#burst-reports button")).click();
        awaitPage(page -> (long) page.get("waiters") > 0);
        awaitPage(page -> page.get("waiters").equals(0L) && page.get("holderRows").equals(0L)
                && page.get("inProgress").equals(0L));
        Map<String, Object> drained = read();
        assertThat(drained.get("fired")).isEqualTo((long) (EXPORT_CALLS + REPORT_CALLS));
        assertThat(drained.get("failed")).as("every call got a permit or a 429").isEqualTo(0L);
        assertThat(mostWaiters).as("the queue the page showed at its longest").isPositive();
        assertThat(holderInstancesSeen).as("holders of both instances, each named (and coloured) as its own")
                .containsExactlyInAnyOrder("A", "B");

        // A permit held for a minute, a burst queuing behind the rest, and the held one released by hand.
        browser.findElement(By.cssSelector("#hold-seconds")).clear();
        browser.findElement(By.cssSelector("#hold-seconds")).sendKeys("60");
        browser.findElement(By.cssSelector("#hold button")).click();
        String token = awaitHeldToken();
        WebElement heldRow = awaitPage(page -> holderRow(token) != null, () -> holderRow(token));
        browser.findElement(By.cssSelector("#burst-reports button")).click();
        awaitPage(page -> page.get("fired").equals((long) (EXPORT_CALLS + 2 * REPORT_CALLS)));
        // The picture: a queue behind the held permit (or, on a machine too slow to show one, the end of the burst).
        awaitPage(page -> (long) page.get("waiters") >= 5 || page.get("inProgress").equals(0L));
        saveScreenshot();
        System.out.printf("live view: the queue seen at most %d long, full: %s%n", mostWaiters, sawFull);

        heldRow.findElement(By.cssSelector("button.release")).click();
        awaitPage(page -> holderRow(token) == null);
        await().atMost(PHASE).until(() -> message().startsWith("Released a permit of reports"));
        awaitPage(page -> page.get("waiters").equals(0L) && page.get("holderRows").equals(0L)
                && page.get("inProgress").equals(0L));
        assertThat(read().get("failed")).isEqualTo(0L);
        assertThat(readings.get()).as("the page was read many times").isGreaterThan(20);
    }

    /**
     * Reads the page until {@code done} holds, checking at every reading that it never shows more
     * holders than permits.
     */
    private void awaitPage(PageCondition done) {
        awaitPage(done, () -> null);
    }

    private <T> T awaitPage(PageCondition done, Supplier<T> result) {
        await().atMost(PHASE).pollInterval(Duration.ofMillis(50)).until(() -> {
            Map<String, Object> page = read();
            if (page == null) {
                return false; // not drawn yet
            }
            checkLimit(page);
            return done.test(page);
        });
        return result.get();
    }

    private void checkLimit(Map<String, Object> page) {
        readings.incrementAndGet();
        assertThat(page.get("limit")).isEqualTo((long) PERMITS);
        assertThat((long) page.get("holderRows")).as("holders on the page").isLessThanOrEqualTo(PERMITS);
        assertThat((long) page.get("heldSegments")).as("held segments of the bar").isLessThanOrEqualTo(PERMITS);
        assertThat((long) page.get("used")).as("permits in use").isLessThanOrEqualTo(PERMITS);
        long waiters = (long) page.get("waiters");
        if (waiters > 0) {
            assertThat(page.get("firstInQueue")).as("the queue is numbered from its head").isEqualTo("1");
        }
        // The reports queue at most MAX_WAITERS (the sample's max-waiters), and the card says when it is full.
        assertThat(waiters).as("callers waiting").isLessThanOrEqualTo(MAX_WAITERS);
        assertThat(page.get("full")).as("the card marked full, %d waiting", waiters).isEqualTo(waiters >= MAX_WAITERS);
        assertThat((String) page.get("waitingText")).isEqualTo(waiters + " of " + MAX_WAITERS
                + (waiters >= MAX_WAITERS ? " (queue full)" : ""));
        sawFull |= waiters >= MAX_WAITERS;
        mostWaiters = Math.max(mostWaiters, waiters);
        @SuppressWarnings("unchecked")
        List<String> instances = (List<String>) page.get("holderInstances");
        holderInstancesSeen.addAll(instances);
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> read() {
        return (Map<String, Object>) ((JavascriptExecutor) browser).executeScript(READ_PAGE);
    }

    /** @return the fencing token the page reports for the permit it asked to hold */
    private String awaitHeldToken() {
        AtomicReference<String> token = new AtomicReference<>();
        await().atMost(PHASE).until(() -> {
            Matcher matcher = TOKEN.matcher(message());
            if (matcher.find()) {
                token.set(matcher.group(1));
            }
            return token.get() != null;
        });
        return token.get();
    }

    private String message() {
        return browser.findElement(By.id("message")).getText();
    }

    /** @return the holder row showing {@code token}, or null; looked up in one step, while rows come and go */
    private WebElement holderRow(String token) {
        return (WebElement) ((JavascriptExecutor) browser).executeScript("""
                return [...document.querySelectorAll("[data-semaphore='reports'] .holders tbody tr")]
                    .find(row => row.querySelector('td.token').textContent === arguments[0]) ?? null;""", token);
    }

    /** The whole page, not only the window: Chromium's own screenshot command through the driver. */
    @SuppressWarnings("unchecked")
    private void saveScreenshot() throws IOException {
        Map<String, Object> layout = browser.executeCdpCommand("Page.getLayoutMetrics", Map.of());
        Map<String, Object> content = (Map<String, Object>) layout.get("cssContentSize");
        Map<String, Object> shot = browser.executeCdpCommand("Page.captureScreenshot", Map.of(
                "format", "png", "captureBeyondViewport", true,
                "clip", Map.of("x", 0, "y", 0, "width", content.get("width"), "height", content.get("height"),
                        "scale", 1)));
        Files.createDirectories(SCREENSHOT.getParent());
        Files.write(SCREENSHOT, Base64.getDecoder().decode((String) shot.get("data")));
    }

    private static ConfigurableApplicationContext start(String name, RedisServer redis, String keyPrefix) {
        return new SpringApplicationBuilder(SampleApplication.class).run(
                "--server.port=0",
                "--spring.data.redis.url=" + redis.uri(),
                "--sample.embedded-redis.enabled=false",
                "--sample.instance-name=" + name,
                "--sample.report-work=250ms",
                "--distributed-semaphore.key-prefix=" + keyPrefix,
                "--management.endpoint.semaphores.access=unrestricted",
                "--spring.main.banner-mode=off");
    }

    private static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @FunctionalInterface
    private interface PageCondition {
        boolean test(Map<String, Object> page);
    }
}
