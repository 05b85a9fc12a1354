/**
 * The engine behind the public API: one {@code DefaultSemaphoreRegistry} per registry, one
 * {@code DefaultRedisSemaphore} per semaphore name in use, and the pieces of each. Internal: no
 * type here is API, and any may change.
 *
 * <h2>Pieces and arrows</h2>
 * An arrow is a call; {@code --Name-->} is a call through {@code Name}, a one- or two-method
 * interface the caller is given (it knows nothing else of the callee). Every arrow points one
 * way but one, which is the protocol's own: the renew call carries the waiters' heartbeats, so its
 * reply grants waiters ({@code LeaseKeeper --WaiterReplies--> Acquisitions}) while an acquisition
 * wakes the tick that runs it ({@code Acquisitions --> RenewalTick}, schedule and return), the two
 * meeting only through the scheduler's thread; every other piece calls no piece that calls it.
 * Made in that order: the tick first (every owner wakes it), the keeper last (what the tick runs,
 * tied once, by {@code drive}). The
 * state one semaphore keeps in this JVM (the leases it holds, the callers it has waiting, its
 * lifecycle) is written by {@code SemaphoreLedger} only: the others change it through the ledger's methods and read it as
 * snapshots, never the maps themselves.
 *
 * <pre>
 *   caller --> DefaultSemaphoreRegistry --makes, looks up, retires, shuts down--> DefaultRedisSemaphore
 *   redis.Inbox --grant, adoption--> DefaultSemaphoreRegistry --grantHeard, adoptionHeard--> DefaultRedisSemaphore
 *   caller --> DefaultRedisSemaphore (checks the arguments, hands each call to the owner whose job it is)
 *   holder --> DefaultPermit --PermitActions--> HeldPermits
 *
 *   The owners of one semaphore, made and wired in DefaultRedisSemaphore's constructor:
 *     Acquisitions     the callers' waits, from the first acquire call to a permit or an exception
 *     HeldPermits      the permits this JVM holds or takes over, and what moves them (release, extend, adopt)
 *     LeaseKeeper      the leases with their renewal: the renew call and its reply, and its
 *                      Watchdog, which gives up a lease no renewal confirmed in time
 *     RenewalTick      when the renewal runs: the one timer of the semaphore, which every owner wakes
 *     ReplyFigures     the figures replies carry (gauges, limit mismatches, the caps' figures)
 *     BackgroundCalls  the calls that go on in the background (clean-ups, sent again until answered)
 *     SemaphoreLedger  the state this JVM keeps of the semaphore (the one writer of it)
 *     DegradedMode     the calls decided without Redis while it cannot be reached (when-unavailable),
 *                      with the LocalPermits it grants, and their write-back when Redis answers again
 *
 *   DefaultRedisSemaphore --> Acquisitions, HeldPermits, LeaseKeeper, RenewalTick, SemaphoreLedger,
 *                             ReplyFigures, BackgroundCalls
 *   DefaultRedisSemaphore --> DegradedMode --RedisPath--> DefaultRedisSemaphore (the write-back and the
 *                             moved waiters go the usual way: tied once, by drive, in the constructor)
 *   DegradedMode --> Outage (one per registry: whether Redis can be reached, its probe and settle
 *                    time) --Recovering--> the registry --> each DefaultRedisSemaphore --> DegradedMode
 *   DegradedMode --> FleetShares (one per registry: presence.lua, the shares by rank), LocalCaps
 *                    (the keys of a capped semaphore, one lock and one cap share for all)
 *   DefaultRedisSemaphore --LiveSemaphores--> the registry (a retired semaphore's work goes to the live one)
 *   Acquisitions --> HeldPermits (a permit it grants, and then cannot hand over, is released)
 *   LeaseKeeper  --WaiterReplies--> Acquisitions (a renewal reply grants a waiter, or makes it join again)
 *   RenewalTick  --Renewals--> LeaseKeeper (on the scheduler's thread; tied once, by drive, in the constructor)
 *   Acquisitions, HeldPermits, ReplyFigures --> RenewalTick (wake, wakeWithin: schedule and return)
 *   HeldPermits, LeaseKeeper --> LeaseKeeper.Watchdog --> BackgroundCalls
 *   Acquisitions, HeldPermits --> BackgroundCalls --> BackgroundCalls.Retries (one per registry: clean-ups
 *                                 to send again, on a timer, or at once when the registry hears Redis answer again)
 *   Acquisitions, HeldPermits, LeaseKeeper, BackgroundCalls --> ReplyFigures --> Listeners,
 *                                 ReplyFigures.LimitMismatch, ReplyFigures.CapFigures (one per registry)
 *   every owner above --> SemaphoreLedger --> Lease, PendingAcquisition (the state machines),
 *                                             Listeners, Observations (events out)
 *   SemaphoreLedger --WaiterRoutes--> the registry (which waiter ids the inbox routes here)
 *   Acquisitions --> redis.GrantRunner (the calls that grant; with replicas to wait for, through
 *                    redis.ReplicaWait, and a grant they did not acknowledge given back --> BackgroundCalls)
 *   the owners --> redis.ScriptRunner, redis.Inbox (all Redis I/O is in core.internal.redis)
 * </pre>
 *
 * What the registry shares with its semaphores (the protocol, the threads, the inbox, the
 * listeners) is handed down once, as a {@code SemaphoreContext}; what a semaphore is (name, keys,
 * settings) is its {@code SemaphoreIdentity}. Both are immutable.
 *
 * <h2>State machines</h2>
 * Where the races are, each drawn in its class: a caller's wait ({@code PendingAcquisition}), a
 * lease ({@code Lease}), a semaphore's lifecycle ({@code SemaphoreLedger}). Every transition of a
 * wait or a lease is one compare-and-set, and the party that wins it is the one that cleans up.
 *
 * <h2>Redis I/O</h2>
 * All of it is in {@code core.internal.redis}, whose package documentation draws it: the scripts,
 * the library's connection, the replica wait, and the pub/sub inbox. This package knows it by
 * narrow types only: {@code ScriptRunner} and {@code GrantRunner} (a call and its parsed reply),
 * the {@code Inbox} interface and the grant callback the registry gives it, {@code Recovery} (the
 * registry hears Redis answer again), and {@code Refusal} (what a server refused). No type here
 * names a Lettuce or Spring listener type.
 */
@NullMarked
package io.github.redissemaphore.core.internal;

import org.jspecify.annotations.NullMarked;
