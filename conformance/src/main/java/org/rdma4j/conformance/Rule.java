// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The rules of docs/SEMANTICS.md a suite or test checks, by id (e.g. {@code S-QP-3}). A test that
 * checks a rule names it here, so the contract and its tests can be traced both ways
 * ({@code git grep 'S-QP-3'}).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface Rule {
    String[] value();
}
