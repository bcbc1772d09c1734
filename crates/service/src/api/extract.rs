//! Request admission: a request's token, role and rate are checked before its body is read,
//! then its body and path are read strictly, so that every handler starts from input it can trust.

use super::BODY_LIMIT;
use crate::admission::Mark;
use crate::auth::Role;
use crate::error::ApiError;
use crate::model::check_id;
use crate::state::{Caller, Shared};
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::marker::PhantomData;
use std::sync::Arc;
use utoipa::IntoParams;

/// A JSON body read strictly: size-limited, JSON content type, unknown fields refused.
pub struct Body<T>(pub T);

impl<T: DeserializeOwned> FromRequest<Arc<Shared>> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, shared: &Arc<Shared>) -> Result<Self, ApiError> {
        if let Some(ct) = req.headers().get(header::CONTENT_TYPE) {
            let ct = ct.to_str().unwrap_or_default();
            if !ct.starts_with("application/json") {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    format!("the body must be application/json, not {ct:?}"),
                ));
            }
        }
        let limit = shared.body_timeout;
        let read = axum::body::Bytes::from_request(req, shared);
        let bytes = tokio::time::timeout(limit, read)
            .await
            .map_err(|_| ApiError::body_too_slow(limit))?
            .map_err(|e| {
                if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::new(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "too_large",
                        format!("the body is larger than {BODY_LIMIT} bytes"),
                    )
                } else {
                    ApiError::bad_request(e.body_text())
                }
            })?;
        parse_json(&bytes).map(Body)
    }
}

/// Reads a JSON body strictly; the error names the field where reading stopped.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // Every body is an object; serde would also read a struct from an array of its fields.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(ApiError::bad_request("body: expected a JSON object"));
    }
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." {
            String::new()
        } else {
            format!(" {at}:")
        };
        ApiError::bad_request(format!("body:{at} {}", e.inner()))
    })?;
    reader
        .end()
        .map_err(|e| ApiError::bad_request(format!("body: {e}")))?;
    Ok(value)
}

/// The id of a node, user or workload in a path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct IdPath {
    /// 1–128 letters, digits and `. _ - : @`.
    #[param(pattern = r"^[A-Za-z0-9._:@-]{1,128}$")]
    id: String,
}

pub(super) type PathId = Result<Path<IdPath>, PathRejection>;

/// A path's id, checked.
pub(super) fn id(what: &str, path: PathId) -> Result<String, ApiError> {
    let Path(IdPath { id }) = path.map_err(|e| ApiError::bad_request(e.body_text()))?;
    check_id(what, &id).map_err(ApiError::invalid)?;
    Ok(id)
}

impl Shared {
    /// Admits a request with these headers if its token's role is at least `needed` and its
    /// rate allows; answers who the token is (an admin when the API is open).
    fn authorize(&self, headers: &HeaderMap, needed: Role) -> Result<Caller, ApiError> {
        let token = if self.digests.is_empty() {
            None
        } else {
            let presented = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| {
                    let (scheme, token) = v.split_once(' ')?;
                    scheme.eq_ignore_ascii_case("bearer").then_some(token)
                })
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::UNAUTHORIZED,
                        "unauthorized",
                        "an Authorization: Bearer token is needed",
                    )
                })?;
            let i = crate::auth::identify(&self.digests, presented.trim()).ok_or_else(|| {
                ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "the token is not valid",
                )
            })?;
            let caller = &self.callers[i];
            if caller.role < needed {
                return Err(ApiError::forbidden(format!(
                    "this needs the {} role; token {} is a {}",
                    needed.name(),
                    caller.name,
                    caller.role.name()
                )));
            }
            Some(i)
        };
        self.admit(token.unwrap_or(usize::MAX))?;
        Ok(token.map_or_else(Caller::open, |i| self.callers[i].clone()))
    }

    fn admit(&self, key: usize) -> Result<(), ApiError> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        limiter.check_key(&key).map_err(|not_until| {
            self.metrics.rate_limited.inc();
            let wait = not_until.wait_time_from(governor::clock::Clock::now(
                &governor::clock::DefaultClock::default(),
            ));
            ApiError::rate_limited(wait)
        })
    }
}

/// A role a handler needs.
pub trait Needs {
    /// The least role admitted.
    const ROLE: Role;
}

/// Needs the agent role (or admin).
pub struct AgentRole;
/// Needs the reader role (or higher).
pub struct ReaderRole;

impl Needs for AgentRole {
    const ROLE: Role = Role::Agent;
}
impl Needs for ReaderRole {
    const ROLE: Role = Role::Reader;
}

/// A request whose token holds the role `R` needs (who the token is inside) and is within
/// its rate; as an extractor before the body, it refuses a request before reading a byte of it.
pub struct Authorized<R>(pub(super) Caller, pub(super) PhantomData<R>);

impl<R: Needs> FromRequestParts<Arc<Shared>> for Authorized<R> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, shared: &Arc<Shared>) -> Result<Self, ApiError> {
        let caller = shared.authorize(&parts.headers, R::ROLE);
        // A valid token proves its connection, whether or not this request may go on (403:
        // another role; 429: over its rate).
        let valid = match &caller {
            Ok(_) => true,
            Err(e) => matches!(
                e.status(),
                StatusCode::FORBIDDEN | StatusCode::TOO_MANY_REQUESTS
            ),
        };
        if let (true, Some(connection)) = (valid, parts.extensions.get::<Arc<Mark>>()) {
            connection.prove();
        }
        Ok(Authorized(caller?, PhantomData))
    }
}

pub(super) type Agent = Authorized<AgentRole>;
pub(super) type Reader = Authorized<ReaderRole>;

#[cfg(test)]
mod tests {
    use super::parse_json;
    use crate::model::UserSpec;

    #[test]
    fn a_body_is_an_object() {
        assert!(parse_json::<UserSpec>(b" {}").is_ok());
        for body in [&b"[]"[..], b"null", b"", b"  [{}]"] {
            let e = parse_json::<UserSpec>(body).unwrap_err();
            assert_eq!(e.message(), "body: expected a JSON object");
        }
        let e = parse_json::<UserSpec>(br#"{"quota": {"cpu": "x"}}"#).unwrap_err();
        assert!(
            e.message().starts_with("body: quota.cpu:"),
            "{}",
            e.message()
        );
    }
}
