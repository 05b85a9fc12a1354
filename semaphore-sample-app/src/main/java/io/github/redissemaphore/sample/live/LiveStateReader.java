package io.github.redissemaphore.sample.live;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.sample.exports.ExportService;
import io.github.redissemaphore.sample.inflight.InFlightCounter;
import io.github.redissemaphore.sample.live.LiveState.CapKeyView;
import io.github.redissemaphore.sample.live.LiveState.CapSegment;
import io.github.redissemaphore.sample.live.LiveState.CapView;
import io.github.redissemaphore.sample.live.LiveState.HolderView;
import io.github.redissemaphore.sample.live.LiveState.SemaphoreView;
import io.github.redissemaphore.sample.live.LiveState.WaiterView;
import io.github.redissemaphore.sample.payments.PaymentService;
import io.github.redissemaphore.sample.reports.ReportService;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * Reads the live view's state: each shown semaphore's {@link SemaphoreState} straight from the
 * registry (one call gives holders and waiters of every JVM), the exports' cap over all tenants
 * (one call more), the sample's in-flight counts, and the fleet, whose members name the instance
 * of each owner.
 */
@Component
public class LiveStateReader {

    private final SemaphoreRegistry registry;
    private final InFlightCounter inFlight;
    private final FleetDirectory fleet;
    private final BurstFirer bursts;
    private final ForceReleaseAccess forceRelease;
    private final List<String> tenants;

    public LiveStateReader(SemaphoreRegistry registry, InFlightCounter inFlight, FleetDirectory fleet,
            BurstFirer bursts, ForceReleaseAccess forceRelease, LiveViewProperties properties) {
        this.registry = registry;
        this.inFlight = inFlight;
        this.fleet = fleet;
        this.bursts = bursts;
        this.forceRelease = forceRelease;
        this.tenants = properties.tenants();
    }

    /** @return the semaphores the page shows: reports, then the exports of each configured tenant */
    public List<String> semaphoreNames() {
        return Stream.concat(Stream.of(ReportService.SEMAPHORE, PaymentService.SEMAPHORE),
                        tenants.stream().map(ExportService::semaphoreOf))
                .toList();
    }

    /** @return the tenants whose exports the page shows */
    public List<String> tenants() {
        return tenants;
    }

    /** @return the state now */
    public LiveState read() {
        List<FleetMember> members = fleet.members();
        List<SemaphoreView> semaphores = semaphoreNames().stream().map(name -> view(name, members)).toList();
        return new LiveState(fleet.self().map(FleetMember::name).orElse(null), members,
                forceRelease.endpointPath().orElse(null), tenants, bursts.counts(), semaphores, exportCap(members));
    }

    /** @return the cap of all tenants' exports, read in one call, with the keys beneath it; null without a cap */
    private @Nullable CapView exportCap(List<FleetMember> members) {
        if (!registry.settingsOf(ExportService.SEMAPHORE).capped()) {
            return null;
        }
        SemaphoreState state = registry.cap(ExportService.SEMAPHORE).state();
        List<CapSegment> segments = new ArrayList<>();
        Map<String, int[]> keys = new TreeMap<>(); // key -> {used, waiters}
        for (SemaphoreState.Holder holder : state.holders()) {
            String key = String.valueOf(holder.key());
            for (int i = 0; i < holder.count(); i++) {
                segments.add(new CapSegment(key, instanceOf(holder.owner(), members)));
            }
            keys.computeIfAbsent(key, k -> new int[2])[0] += holder.count();
        }
        state.waiters().forEach(waiter -> keys.computeIfAbsent(String.valueOf(waiter.key()), k -> new int[2])[1]++);
        return new CapView(state.name(), state.limit(), state.used(), state.limitSource(), segments,
                keys.entrySet().stream()
                        .map(key -> new CapKeyView(key.getKey(), key.getValue()[0], key.getValue()[1])).toList());
    }

    private SemaphoreView view(String name, List<FleetMember> members) {
        SemaphoreState state = registry.semaphore(name).state();
        List<HolderView> holders = state.holders().stream()
                .map(holder -> new HolderView(holder.permitId(), holder.count(), String.valueOf(holder.fencingToken()),
                        holder.owner(), instanceOf(holder.owner(), members), holder.leaseRemaining().toMillis()))
                .toList();
        List<WaiterView> waiters = state.waiters().stream()
                .map(waiter -> new WaiterView(waiter.waiterId(), waiter.count(), waiter.owner(),
                        instanceOf(waiter.owner(), members),
                        waiter.predictedWait() == null ? null : waiter.predictedWait().toMillis()))
                .toList();
        SemaphoreSettings settings = registry.settingsOf(name);
        SemaphoreState.RateWindow window = state.rateWindow();
        // (The rate in force, a runtime rate while one is set: the window tells it.)
        SemaphoreState.RateWindow told = window != null && window.rateLimit() > 0 ? window : null;
        return new SemaphoreView(name, state.limit(), state.used(), inFlight.read(name).now(), holders, waiters,
                settings.maxWaiters(), told != null ? told.rateLimit() : settings.rateLimit(),
                told != null ? told.ratePeriod().toMillis() : settings.ratePeriod().toMillis(),
                window == null ? 0 : window.grants());
    }

    private static @Nullable String instanceOf(String owner, List<FleetMember> members) {
        return FleetMember.nameOf(owner, members).orElse(null);
    }
}
