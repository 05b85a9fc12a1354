package io.github.redissemaphore.autoconfigure;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * What a setting of {@link DistributedSemaphoreProperties} without a default means when it is left
 * out ("no shared cap"), for {@link SettingDescription}: the failure report then says what removing
 * the property gives, as it does for a setting with a default.
 */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@interface WhenLeftOut {

    /** What applies without the setting, e.g. "no shared cap". */
    String value();
}
