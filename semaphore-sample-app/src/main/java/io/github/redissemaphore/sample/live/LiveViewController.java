package io.github.redissemaphore.sample.live;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.sample.live.BurstFirer.BurstCounts;
import io.github.redissemaphore.sample.reports.ReportService;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * The live view's data and buttons; the page itself is {@code static/index.html}.
 * {@code GET /live/state} is what the page polls; the POSTs fire bursts at the fleet's report and
 * export endpoints and take a permit to hold. Forced release goes to the starter's actuator
 * endpoint directly.
 */
@RestController
@RequestMapping("/live")
public class LiveViewController {

    /** Enough for a long queue; bounded, since every call takes a request thread while it waits. */
    private static final int MAX_CALLS = 200;
    private static final int MAX_HOLD_SECONDS = 300;

    private final LiveStateReader state;
    private final FleetDirectory fleet;
    private final BurstFirer bursts;
    private final PermitHolds holds;

    public LiveViewController(LiveStateReader state, FleetDirectory fleet, BurstFirer bursts, PermitHolds holds) {
        this.state = state;
        this.fleet = fleet;
        this.bursts = bursts;
        this.holds = holds;
    }

    @GetMapping("/state")
    public LiveState state() {
        return state.read();
    }

    /** Fires {@code calls} {@code POST /reports} at once, spread over the fleet. */
    @PostMapping("/bursts/reports")
    @ResponseStatus(HttpStatus.ACCEPTED)
    public BurstCounts burstOfReports(@RequestParam(defaultValue = "30") int calls) {
        between(calls, 1, MAX_CALLS, "calls");
        bursts.fire(fleet.members(), "/reports?title=live-view", calls);
        return bursts.counts();
    }

    /** Fires {@code calls} {@code POST /tenants/{tenant}/exports} at once, spread over the fleet. */
    @PostMapping("/bursts/exports")
    @ResponseStatus(HttpStatus.ACCEPTED)
    public BurstCounts burstOfExports(@RequestParam String tenant,
            @RequestParam(defaultValue = "4") int calls) {
        shown(state.tenants(), tenant, "tenant");
        between(calls, 1, MAX_CALLS, "calls");
        bursts.fire(fleet.members(), "/tenants/" + tenant + "/exports", calls);
        return bursts.counts();
    }

    /**
     * Takes one permit of {@code semaphore} (waiting like any caller) and keeps it {@code seconds};
     * answers once it is granted, or 429 when none came in the semaphore's wait time.
     */
    @PostMapping("/holds")
    public CompletableFuture<HeldPermit> hold(@RequestParam(defaultValue = ReportService.SEMAPHORE) String semaphore,
            @RequestParam(defaultValue = "20") int seconds) {
        shown(state.semaphoreNames(), semaphore, "semaphore");
        between(seconds, 1, MAX_HOLD_SECONDS, "seconds");
        return holds.hold(semaphore, Duration.ofSeconds(seconds)).thenApply(permit -> HeldPermit.of(permit, seconds));
    }

    /** A bad parameter: 400 with a problem body that says which and what is allowed. */
    @ExceptionHandler
    public ProblemDetail badParameter(IllegalArgumentException e) {
        return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, e.getMessage());
    }

    /** Only what the page shows can be fired at or held: nothing else is created on request. */
    private static void shown(List<String> allowed, String value, String parameter) {
        if (!allowed.contains(value)) {
            throw new IllegalArgumentException(parameter + " must be one of " + allowed + ", but was '" + value + "'");
        }
    }

    private static void between(int value, int min, int max, String parameter) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(parameter + " must be between " + min + " and " + max + ", but was " + value);
        }
    }

    /**
     * A permit the instance now holds for the page.
     *
     * @param semaphore    its semaphore
     * @param permitId     its id
     * @param fencingToken its fencing token
     * @param seconds      how long it is kept
     */
    public record HeldPermit(String semaphore, String permitId, String fencingToken, int seconds) {

        static HeldPermit of(Permit permit, int seconds) {
            return new HeldPermit(permit.semaphoreName(), permit.id(), String.valueOf(permit.fencingToken()), seconds);
        }
    }
}
