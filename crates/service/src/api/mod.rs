//! The HTTP API under `/v1`, its OpenAPI document (generated from these handlers), and the
//! health and metrics endpoints. A request's token and role are checked before its body is
//! read, then its input fully, then it acts; every error is a JSON [`ErrorBody`].

use crate::auth::Role;
use crate::error::ApiError;
use crate::model::{
    check_id, ErrorBody, Explanation, Health, NodeSpec, NodeStatus, Priorities, UsageAck,
    UsageReport, UserSpec, WorkloadSpec, MAX_QUANTITY, MIN_SUPPLY,
};
use crate::state::Shared;
use crate::store::StoreError;
use axum::extract::rejection::QueryRejection;
use axum::extract::{DefaultBodyLimit, MatchedPath, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use fairshare_core::error::Chain;
use fairshare_core::heaviness::{Resource, ResourceKind};
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoParams, Modify, OpenApi};

mod extract;

use extract::{id, Agent, PathId, Reader};
pub use extract::{parse_json, AgentRole, Authorized, Body, IdPath, Needs, ReaderRole};

/// The largest request body accepted.
pub const BODY_LIMIT: usize = 1 << 20;
/// How long `/readyz` waits for the database to answer.
const READY_WITHIN: Duration = Duration::from_secs(1);

type AppState = State<Arc<Shared>>;

/// `?node=` on `GET /v1/priorities`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct NodeFilter {
    /// Only this node's workloads and the users owning them.
    node: Option<String>,
}

#[utoipa::path(put, path = "/v1/nodes/{id}", tag = "registry",
    params(IdPath),
    request_body = NodeSpec,
    responses(
        (status = 204, description = "Registered or updated"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn put_node(
    State(s): AppState,
    Authorized(caller, _): Agent,
    path: PathId,
    Body(spec): Body<NodeSpec>,
) -> Result<StatusCode, ApiError> {
    let id = id("node", path)?;
    caller.check_node(&id)?;
    spec.check(&s.settings.resources)
        .map_err(ApiError::invalid)?;
    s.store.put_node(&id, &spec).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(delete, path = "/v1/nodes/{id}", tag = "registry",
    params(IdPath),
    responses((status = 204, description = "Removed, with every workload on it"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn delete_node(
    State(s): AppState,
    Authorized(caller, _): Agent,
    path: PathId,
) -> Result<StatusCode, ApiError> {
    let id = id("node", path)?;
    caller.check_node(&id)?;
    if s.store.delete_node(&id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!(
            "node {id:?} is not registered"
        )))
    }
}

#[utoipa::path(get, path = "/v1/nodes", tag = "registry",
    responses((status = 200, body = [NodeStatus]), (status = 401, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn list_nodes(State(s): AppState, _: Reader) -> Result<Json<Vec<NodeStatus>>, ApiError> {
    Ok(Json(s.store.nodes().await?))
}

#[utoipa::path(put, path = "/v1/users/{id}", tag = "registry",
    params(IdPath),
    request_body = UserSpec,
    responses(
        (status = 204, description = "Registered or updated"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Some users have a quota and this one would not, or the reverse"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn put_user(
    State(s): AppState,
    Authorized(caller, _): Agent,
    path: PathId,
    Body(spec): Body<UserSpec>,
) -> Result<StatusCode, ApiError> {
    let id = id("user", path)?;
    let quota = spec
        .check(&s.settings.resources)
        .map_err(ApiError::invalid)?;
    if caller.role == Role::Admin {
        s.store.put_user(&id, &spec).await?;
    } else if quota.is_some() {
        return Err(ApiError::forbidden(
            "an agent may only add a user without a quota; quotas need the admin role",
        ));
    } else {
        s.store.add_user(&id).await?;
    }
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/v1/users/{id}", tag = "priorities",
    params(IdPath),
    responses((status = 200, body = Explanation), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn explain_user(
    State(s): AppState,
    _: Reader,
    path: PathId,
) -> Result<Json<Explanation>, ApiError> {
    let id = id("user", path)?;
    let snapshot = s.snapshot();
    if let Some(e) = snapshot.explain(&id) {
        return Ok(Json(e));
    }
    if s.store.user_exists(&id).await? {
        let names = s.settings.resources.iter().map(|r| r.name.clone());
        return Ok(Json(Explanation::uncounted(&id, snapshot.cycle, names)));
    }
    Err(ApiError::not_found(format!(
        "user {id:?} is not registered"
    )))
}

#[utoipa::path(put, path = "/v1/workloads/{id}", tag = "registry",
    params(IdPath),
    request_body = WorkloadSpec,
    responses(
        (status = 204, description = "Registered, moved or resized"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn put_workload(
    State(s): AppState,
    Authorized(caller, _): Agent,
    path: PathId,
    Body(spec): Body<WorkloadSpec>,
) -> Result<StatusCode, ApiError> {
    let id = id("workload", path)?;
    spec.check(&s.settings.resources)
        .map_err(ApiError::invalid)?;
    s.store
        .put_workload(&id, &spec, |node| caller.may_act_for(node))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(delete, path = "/v1/workloads/{id}", tag = "registry",
    params(IdPath),
    responses((status = 204, description = "Removed"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn delete_workload(
    State(s): AppState,
    Authorized(caller, _): Agent,
    path: PathId,
) -> Result<StatusCode, ApiError> {
    let id = id("workload", path)?;
    let deleted = s
        .store
        .delete_workload(&id, |node| caller.may_act_for(node));
    if deleted.await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!(
            "workload {id:?} is not registered"
        )))
    }
}

#[utoipa::path(post, path = "/v1/usage", tag = "usage",
    request_body = UsageReport,
    responses(
        (status = 200, body = UsageAck, description = "Stored durably, or a duplicate of a stored report"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "The same (node, seq) was stored with different contents"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn post_usage(
    State(s): AppState,
    Authorized(caller, _): Agent,
    Body(report): Body<UsageReport>,
) -> Result<Json<UsageAck>, ApiError> {
    caller.check_node(&report.node)?;
    let resources = &s.settings.resources;
    let amounts = report.check(resources).map_err(ApiError::invalid)?;
    let rates = report.rates(&amounts, resources);
    s.store.check_report(&report, &rates, resources).await?;
    let samples = report.samples.len() as u64;
    let ack = s.write(report).await?;
    if ack.duplicate {
        s.metrics.reports_duplicate.inc();
    } else {
        s.metrics.reports_stored.inc();
        s.metrics.samples_stored.inc_by(samples);
    }
    Ok(Json(ack))
}

#[utoipa::path(get, path = "/v1/priorities", tag = "priorities",
    params(NodeFilter),
    responses((status = 200, body = Priorities), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn priorities(
    State(s): AppState,
    _: Reader,
    query: Result<Query<NodeFilter>, QueryRejection>,
) -> Result<Json<Priorities>, ApiError> {
    let Query(filter) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    if let Some(node) = &filter.node {
        check_id("node", node).map_err(ApiError::invalid)?;
    }
    Ok(Json(s.snapshot().priorities(filter.node.as_deref())))
}

/// `?node=` on `GET /v1/access`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct AccessQuery {
    /// The node an agent would report and register for.
    node: String,
}

#[utoipa::path(get, path = "/v1/access", tag = "registry",
    params(AccessQuery),
    responses((status = 204, description = "The token may report, register and delete for this node"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an agent or admin token, or bound to other nodes"),
        (status = 422, body = ErrorBody), (status = 429, body = ErrorBody)),
    security(("bearer" = [])))]
/// Whether the caller's token may act for a node, changing nothing: what an agent's `--check`
/// asks.
async fn access(
    Authorized(caller, _): Agent,
    query: Result<Query<AccessQuery>, QueryRejection>,
) -> Result<StatusCode, ApiError> {
    let Query(AccessQuery { node }) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    check_id("node", &node).map_err(ApiError::invalid)?;
    caller.check_node(&node)?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, body = Health, description = "The process is alive")))]
async fn healthz(State(s): AppState) -> Json<Health> {
    Json(s.health("ok"))
}

#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses((status = 200, body = Health, description = "The database answers"),
        (status = 503, body = Health, description = "The database does not answer")))]
async fn readyz(State(s): AppState) -> (StatusCode, Json<Health>) {
    let ping = tokio::time::timeout(READY_WITHIN, s.store.ping()).await;
    match ping.unwrap_or_else(|_| Err(StoreError::Unanswered(READY_WITHIN))) {
        Ok(()) => (StatusCode::OK, Json(s.health("ok"))),
        Err(e) => {
            tracing::warn!(error = %Chain(&e), "not ready: the database does not answer");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(s.health("the database does not answer")),
            )
        }
    }
}

#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, content_type = "text/plain", body = String,
        description = "Prometheus text exposition")))]
async fn metrics(State(s): AppState) -> impl IntoResponse {
    s.refresh_gauges();
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        s.metrics.render(),
    )
}

#[utoipa::path(get, path = "/v1/openapi.json", tag = "operations",
    responses((status = 200, content_type = "application/json", body = Object,
        description = "This document, its resource maps naming the resources this daemon measures")))]
async fn openapi(State(s): AppState) -> Json<serde_json::Value> {
    Json(document(&s.settings.resources))
}

/// The OpenAPI document as a daemon configured with `resources` serves it: every map of a
/// quantity per resource lists those resources by name, with the bounds its check applies and
/// an example of each, so that a request built from the document is one the daemon accepts.
pub fn document(resources: &[Resource]) -> serde_json::Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).expect("the document is JSON");
    let at_least = |min: f64| json!({"minimum": min, "maximum": MAX_QUANTITY});
    // Examples by kind: CPUs, memory bytes, disk and network bytes per second (or moved).
    let maps = [
        (
            "NodeSpec",
            "supply",
            at_least(MIN_SUPPLY),
            [8.0, 34359738368.0, 2e8, 1.25e8, 1.0],
        ),
        (
            "UserSpec",
            "quota",
            at_least(0.0),
            [16.0, 68719476736.0, 0.0, 0.0, 0.0],
        ),
        (
            "WorkloadSpec",
            "virtual",
            json!({"exclusiveMinimum": 0.0, "maximum": MAX_QUANTITY}),
            [2.0, 4294967296.0, 0.0, 0.0, 0.0],
        ),
        (
            "Sample",
            "usage",
            at_least(0.0),
            [19.5, 2147483648.0, 1048576.0, 52428.0, 1.0],
        ),
    ];
    for (schema, field, bounds, examples) in maps {
        let sized = field == "quota" || field == "virtual";
        let named: Vec<(&str, f64)> = resources
            .iter()
            .filter(|r| !sized || r.kind.has_virtual())
            .map(|r| (r.name.as_str(), examples[kind_index(r.kind)]))
            .collect();
        let property = &mut doc["components"]["schemas"][schema]["properties"][field];
        *property = per_resource_schema(property, &named, &bounds);
    }
    doc
}

/// Where a kind's example is in [`document`]'s rows.
fn kind_index(kind: ResourceKind) -> usize {
    match kind {
        ResourceKind::Cpu => 0,
        ResourceKind::Memory => 1,
        ResourceKind::Disk => 2,
        ResourceKind::Network => 3,
        ResourceKind::Other => 4,
    }
}

/// A map of a quantity per resource as an object with exactly the resources `named` (each
/// with its example), each a number within `bounds`; the generated `map`'s description and
/// nullability kept.
fn per_resource_schema(
    map: &serde_json::Value,
    named: &[(&str, f64)],
    bounds: &serde_json::Value,
) -> serde_json::Value {
    let mut number = json!({"type": "number"});
    number
        .as_object_mut()
        .expect("an object")
        .extend(bounds.as_object().expect("an object").clone());
    let nullable = map.to_string().contains(r#""null""#);
    let names: Vec<&str> = named.iter().map(|(n, _)| *n).collect();
    let mut schema = json!({
        "type": if nullable { json!(["object", "null"]) } else { json!("object") },
        "properties": names.iter().map(|n| (n.to_string(), number.clone())).collect::<serde_json::Map<_, _>>(),
        "required": names,
        "additionalProperties": false,
        "example": named.iter().map(|(n, v)| (n.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
    });
    if let Some(description) = map.get("description") {
        schema["description"] = description.clone();
    }
    schema
}

/// Counts and times every request by its route (not its raw path, which would be unbounded).
async fn observe(State(s): AppState, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |m| m.as_str())
        .to_string();
    let method: &'static str = match request.method().as_str() {
        "GET" => "GET",
        "PUT" => "PUT",
        "POST" => "POST",
        "DELETE" => "DELETE",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        "PATCH" => "PATCH",
        _ => "other",
    };
    let start = Instant::now();
    let response = next.run(request).await;
    s.metrics
        .latency
        .with_label_values(&[method, &route])
        .observe(start.elapsed().as_secs_f64());
    s.metrics
        .requests
        .with_label_values(&[method, &route, response.status().as_str()])
        .inc();
    response
}

async fn fallback() -> ApiError {
    ApiError::not_found("no such endpoint; the API is described at /v1/openapi.json")
}

/// The bearer scheme in the document.
struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The OpenAPI document of the API.
#[derive(OpenApi)]
#[openapi(
    info(title = "fairshare fairness service", description = "Collects what every node's workloads consumed, computes each user's heaviness over the whole cloud, and serves the priorities and knob values every node applies."),
    paths(put_node, delete_node, list_nodes, put_user, explain_user, put_workload, delete_workload, post_usage,
        priorities, access, healthz, readyz, metrics, openapi),
    modifiers(&BearerScheme)
)]
pub struct ApiDoc;

/// The whole application.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/nodes", get(list_nodes))
        .route("/v1/nodes/{id}", put(put_node).delete(delete_node))
        .route("/v1/users/{id}", put(put_user).get(explain_user))
        .route(
            "/v1/workloads/{id}",
            put(put_workload).delete(delete_workload),
        )
        .route("/v1/usage", post(post_usage))
        .route("/v1/priorities", get(priorities))
        .route("/v1/access", get(access))
        .route("/v1/openapi.json", get(openapi))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .fallback(fallback)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(middleware::from_fn_with_state(shared.clone(), observe))
        .with_state(shared)
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not take that method; see /v1/openapi.json",
    )
}

#[cfg(test)]
mod tests {
    use super::ApiDoc;
    use utoipa::OpenApi;

    #[test]
    fn the_document_describes_the_knob_values_written() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        for schema in ["UsageReport", "WorkloadPriority"] {
            let written = &doc["components"]["schemas"][schema]["properties"]["written"];
            assert!(written.is_object(), "{schema}: {written}");
        }
    }

    #[test]
    fn the_served_document_names_the_configured_resources() {
        use fairshare_core::heaviness::{Resource, ResourceKind};
        let resources = [
            Resource::new("cpu", ResourceKind::Cpu),
            Resource::new("mem", ResourceKind::Memory),
            Resource::new("net", ResourceKind::Network),
        ];
        let doc = super::document(&resources);
        let schemas = &doc["components"]["schemas"];
        let supply = &schemas["NodeSpec"]["properties"]["supply"];
        assert_eq!(supply["required"], serde_json::json!(["cpu", "mem", "net"]));
        assert_eq!(supply["properties"]["net"]["minimum"], 1e-3);
        assert!(supply["description"]
            .as_str()
            .unwrap()
            .starts_with("Physical supply"));
        assert_eq!(supply["example"]["mem"], 34359738368.0);
        assert_eq!(supply["example"]["net"], 1.25e8);
        let quota = &schemas["UserSpec"]["properties"]["quota"];
        assert_eq!(quota["type"], serde_json::json!(["object", "null"]));
        assert_eq!(quota["required"], serde_json::json!(["cpu", "mem"]));
        let size = &schemas["WorkloadSpec"]["properties"]["virtual"];
        assert_eq!(size["properties"]["cpu"]["exclusiveMinimum"], 0.0);
        assert_eq!(size["additionalProperties"], false);
        assert!(!doc.to_string().contains(":null"), "no property left null");
        // Each map of numbers is its own inline schema: one shared component named after the
        // generic type said that supplies were whole numbers.
        let text = serde_json::to_string(&ApiDoc::openapi()).unwrap();
        assert!(!text.contains("schemas/BTreeMap"), "{text}");
        let usage = &schemas["Explanation"]["properties"]["usage"];
        assert_eq!(
            usage["oneOf"][0]["additionalProperties"]["type"], "number",
            "{usage}"
        );
    }
}
