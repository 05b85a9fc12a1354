/**
 * All Redis I/O of the engine, internal: no type here is API, and any may change.
 *
 * <h2>The scripts</h2>
 * One type per script (its arguments, and its reply with named fields: {@code AcquireScript},
 * {@code ReleaseScript}, ...), {@link io.github.redissemaphore.core.internal.redis.ScriptRunner}
 * (EVALSHA, EVAL on NOSCRIPT, the time bound, errors) and
 * {@link io.github.redissemaphore.core.internal.redis.ReplicaWait} (a call, then {@code WAIT}, once
 * {@link io.github.redissemaphore.core.internal.redis.WaitCheck} learnt that the server runs it),
 * wrapped, for the calls that grant, by
 * {@link io.github.redissemaphore.core.internal.redis.GrantRunner}: the runner itself without
 * replicas to wait for; with them, a grant they did not acknowledge is given back, then fails.
 *
 * <h2>The connections</h2>
 * <pre>
 *   ScriptRunner, ReplicaWait --> RedisConnections  the library's connection: sends the calls on it,
 *                                                    in order; closes it all
 *   RedisConnections --> TimeBound     how long a call may take; a reply bounded by it
 *                    --> CallLine      the calls' places in line; the calls waiting for a connection
 *                                      (WaitingCall), in the order made
 *                    --> ConnectionKeeper  the connection now; made anew at once, and every 200 ms
 *                                          while calls wait; sends the line once one is made
 *                    --> ReadOnlyFollower  READONLY: the connection dropped, the master followed, the
 *                                          refused calls sent again in their place
 *   ConnectionKeeper --> ConnectionMaker (makes it, as a Link), LettuceReconnects (Lettuce made it
 *                        anew by itself), RecoveryNotice (a connection made is a recovery: logged,
 *                        told to the registry)
 *   ReadOnlyFollower --> ReadOnlyWarnings, ReadOnlyRetirement (the connection dropped for READONLY,
 *                        kept until its calls are back; at most one dropped a second)
 *   ReplicaWait --> WaitCheck, DedicatedConnections  its own: whether the server runs WAIT, and a
 *                                                    connection of its own, from the factory, for it
 *   WaitCheck --> DedicatedConnections
 *   RedisConnections, DedicatedConnections --> AnswerTracker  whether Redis answers, unanswered since;
 *                                                             tells the registry's Recovery
 *   failures --> CallFailures (no reply, no connection, closed), RefusedCalls and Refusal (what a
 *                server refused, read from its reply and explained to the caller)
 * </pre>
 *
 * <h2>The inbox</h2>
 * {@link io.github.redissemaphore.core.internal.redis.Inbox}: where the JVM hears its grants,
 * chosen by {@link io.github.redissemaphore.core.internal.redis.InboxChoice}: one pub/sub channel per
 * JVM ({@code JvmInbox}, Spring's listener container), or sharded pub/sub on a Redis Cluster 7+
 * ({@code ShardedInbox}, Lettuce). The engine sees only the interface and hands it a grant callback.
 *
 * <p>Log categories: what the library's connection does logs under {@code RedisConnections}'s
 * (whichever class of it logs), the inbox under its class's, {@code WaitCheck} under its own.
 */
@NullMarked
package io.github.redissemaphore.core.internal.redis;

import org.jspecify.annotations.NullMarked;
