/**
 * The engine behind the public API: one {@code DefaultSemaphoreRegistry} per registry, one
 * {@code DefaultRedisSemaphore} per semaphore name in use, and the pieces of each. Internal: no
 * type here is API, and any may change.
 *
 * <h2>Pieces and arrows</h2>
 * An arrow is a call; {@code --Name-->} is a call through {@code Name}, a one- or two-method
 * interface the caller is given (it knows nothing else of the callee). Every arrow points one
 * way: no piece calls a piece that calls it. The state one semaphore keeps in this JVM (the
 * leases it holds, the callers it has waiting, its lifecycle) is written by
 * {@code SemaphoreLedger} only: the others change it through the ledger's methods and read it as
 * snapshots, never the maps themselves.
 *
 * <pre>
 *   caller --> DefaultSemaphoreRegistry --makes, looks up, retires, shuts down--> DefaultRedisSemaphore
 *   redis.Inbox --grant, adoption--> DefaultSemaphoreRegistry --grantHeard, adoptionHeard--> DefaultRedisSemaphore
 *   caller --> DefaultRedisSemaphore (checks the arguments, hands each call to the piece whose job it is)
 *   holder --> DefaultPermit --PermitActions--> HeldPermits
 *
 *   DefaultRedisSemaphore --> Acquisitions, HeldPermits, LeaseKeeper, RenewalTick, SemaphoreLedger,
 *                             ReplyFigures, BackgroundCalls
 *   DefaultRedisSemaphore --LiveSemaphores--> the registry (a retired semaphore's work goes to the live one)
 *   Acquisitions --> HeldPermits (a permit it grants, and then cannot hand over, is released)
 *   LeaseKeeper  --WaiterReplies--> Acquisitions (a renewal reply grants a waiter, or makes it join again)
 *   RenewalTick  --Renewals--> LeaseKeeper (on the scheduler's thread)
 *   Acquisitions, HeldPermits, ReplyFigures --> RenewalTick (wake, wakeWithin: schedule and return)
 *   HeldPermits, LeaseKeeper --> LeaseWatchdog --> BackgroundCalls
 *   Acquisitions, HeldPermits --> BackgroundCalls --> Retries (clean-ups to send again: on a timer, or at once
 *                                                     when the registry hears Redis answer again)
 *   Acquisitions, HeldPermits, LeaseKeeper, BackgroundCalls --> ReplyFigures --> LimitMismatch, Listeners
 *   every piece above --> SemaphoreLedger --> Lease, PendingAcquisition (the state machines),
 *                                             Listeners, Observations (events out)
 *   SemaphoreLedger --WaiterRoutes--> the registry (which waiter ids the inbox routes here)
 *   the pieces --> redis.ScriptRunner, redis.ReplicaWait, redis.Inbox (all Redis I/O is in core.internal.redis)
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
 * narrow types only: {@code ScriptRunner} and {@code ReplicaWait} (a call and its parsed reply),
 * the {@code Inbox} interface and the grant callback the registry gives it, {@code Recovery} (the
 * registry hears Redis answer again), and {@code Refusal} (what a server refused). No type here
 * names a Lettuce or Spring listener type.
 */
@NullMarked
package io.github.redissemaphore.core.internal;

import org.jspecify.annotations.NullMarked;
