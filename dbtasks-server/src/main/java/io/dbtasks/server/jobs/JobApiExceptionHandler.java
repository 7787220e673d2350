package io.dbtasks.server.jobs;

import io.dbtasks.batch.BatchNotFoundException;
import io.dbtasks.job.DuplicateJobException;
import io.dbtasks.job.JobDisabledException;
import io.dbtasks.job.JobNotFoundException;
import io.dbtasks.server.web.Problems;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * The job and batch API's own errors as {@code application/problem+json}: 404 for an unknown code
 * or batch, 409 for a duplicate code or a disabled job. Everything else (a definition the core
 * refuses, unreadable bodies, bad parameters, store failures) is answered by the API's general
 * handler: an {@code IllegalArgumentException} handler here would also catch, by its cause, a path
 * variable that does not convert, and answer it with the converter's message, which names Java
 * types. Ordered first, and limited to this package's controllers.
 */
@RestControllerAdvice(basePackageClasses = JobController.class)
@Order(Ordered.HIGHEST_PRECEDENCE)
public class JobApiExceptionHandler {

    @ExceptionHandler({JobNotFoundException.class, BatchNotFoundException.class})
    ResponseEntity<ProblemDetail> notFound(RuntimeException e, HttpServletRequest request) {
        return problem(
                HttpStatus.NOT_FOUND,
                e instanceof JobNotFoundException ? "Job not found" : "Batch not found",
                e,
                request);
    }

    @ExceptionHandler(DuplicateJobException.class)
    ResponseEntity<ProblemDetail> duplicate(DuplicateJobException e, HttpServletRequest request) {
        return problem(HttpStatus.CONFLICT, "Job code taken", e, request);
    }

    @ExceptionHandler(JobDisabledException.class)
    ResponseEntity<ProblemDetail> disabled(JobDisabledException e, HttpServletRequest request) {
        return problem(HttpStatus.CONFLICT, "Job disabled", e, request);
    }

    private static ResponseEntity<ProblemDetail> problem(
            HttpStatus status, String title, RuntimeException e, HttpServletRequest request) {
        // Cut short: a message may quote the code the client sent, which may be thousands of characters.
        ProblemDetail body = ProblemDetail.forStatusAndDetail(status, Problems.clean(e.getMessage()));
        body.setTitle(title);
        body.setInstance(Problems.instance(request.getRequestURI())); // also cut short
        return ResponseEntity.status(status)
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .body(body);
    }
}
