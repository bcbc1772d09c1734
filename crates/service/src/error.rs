//! The API's error answers: a status and a JSON [`ErrorBody`] naming the problem, made from
//! the store's errors where they come from there. Handlers, the shared state's writer and the
//! server all answer with [`ApiError`], so it sits below them all.

use crate::model::ErrorBody;
use crate::store::StoreError;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use fairshare_core::error::Chain;
use std::time::Duration;

/// An error answer: a status and a JSON body naming the problem.
#[derive(Debug, Clone)]
pub struct ApiError {
    status: StatusCode,
    kind: &'static str,
    message: String,
    retry_after: Option<Duration>,
}

impl ApiError {
    pub(crate) fn new(
        status: StatusCode,
        kind: &'static str,
        message: impl Into<String>,
    ) -> ApiError {
        ApiError {
            status,
            kind,
            message: message.into(),
            retry_after: None,
        }
    }

    /// 400: the body or a parameter cannot be read.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 422: readable, but a value is out of range or names something unknown.
    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", message)
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 503: the database or the service cannot answer now.
    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }

    /// 408: the body did not arrive in time; the connection is closed.
    /// The HTTP status it answers with.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub(crate) fn body_too_slow(limit: Duration) -> ApiError {
        ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            format!(
                "the body did not arrive within {} s (limits.body_timeout_s)",
                limit.as_secs_f64()
            ),
        )
    }

    /// What went wrong, as the answer's body says it.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// 429: the token's request rate is over its limit; it may retry after `wait`.
    pub fn rate_limited(wait: Duration) -> ApiError {
        ApiError {
            retry_after: Some(wait),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                "this token's request rate is over its limit; retry later",
            )
        }
    }

    /// 403: the token may not do this.
    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "forbidden", message)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::Invalid(m) => ApiError::invalid(m),
            StoreError::Conflict(m) => ApiError::new(StatusCode::CONFLICT, "conflict", m),
            StoreError::Forbidden(m) => ApiError::forbidden(m),
            e @ (StoreError::Database(_) | StoreError::Unanswered(_)) => {
                tracing::error!(error = %Chain(&e), "database error");
                ApiError::unavailable("the database did not answer; the daemon's log says why")
            }
            e => {
                tracing::error!(error = %Chain(&e), "store error");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "the stored state could not be read; the daemon's log says why",
                )
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: self.kind.to_string(),
            message: self.message,
        };
        let mut response = (self.status, Json(body)).into_response();
        let headers = response.headers_mut();
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if self.status == StatusCode::REQUEST_TIMEOUT {
            // The rest of the body may still come: the connection cannot carry another request.
            headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if let Some(wait) = self.retry_after {
            let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}
