//! JSON Schema → the OpenAPI subset Gemini accepts in `functionDeclarations[].parameters`.
//!
//! Anthropic and OpenAI take JSON Schema as written (non-strict). Gemini's `parameters` is a
//! `Schema` message: it rejects `additionalProperties`, `$schema`, `$ref`, `const`, type arrays and
//! other keywords that the others accept. This module rewrites a schema into that subset by an
//! allowlist, so keywords Gemini adds support for later are dropped until listed here, never sent
//! by accident:
//! - kept: `type`, `description`, `title`, `nullable`, `enum` (strings), `properties`, `required`,
//!   `items`, `anyOf`, `minimum`/`maximum`, `minItems`/`maxItems`, `minLength`/`maxLength`,
//!   `minProperties`/`maxProperties`, `pattern`, `default`, `example`, `propertyOrdering`, and the
//!   `format`s Gemini documents (`enum`, `date-time`, `int32`, `int64`, `float`, `double`);
//! - rewritten (reported as changed): `["T", "null"]` → `T` + `nullable`, other type arrays →
//!   `anyOf`, `oneOf` → `anyOf`, string `const` → one-value `enum`, `exclusiveMinimum`/`Maximum`
//!   → `minimum`/`maximum`, local `$ref`s → the referenced definition inlined;
//! - everything else dropped and reported with its JSON pointer.
//!
//! A recursive `$ref` cannot be inlined and is an error.

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};

use super::loss::{Location, LossKind, Losses};

const KEPT: [&str; 17] = [
    "type",
    "description",
    "title",
    "nullable",
    "required",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "pattern",
    "default",
    "example",
    "propertyOrdering",
];
const FORMATS: [&str; 6] = ["enum", "date-time", "int32", "int64", "float", "double"];
const MAX_DEPTH: usize = 32;

struct Sanitizer<'a> {
    tool: &'a str,
    defs: Option<&'a Map<String, Value>>,
    losses: &'a mut Losses,
}

/// Rewrites `schema` (the input schema of tool `tool`) for Gemini `parameters`.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] for a `$ref` that is not local, points nowhere, or recurses.
pub(crate) fn for_gemini(schema: &Value, tool: &str, losses: &mut Losses) -> Result<Value> {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object);
    let mut sanitizer = Sanitizer { tool, defs, losses };
    sanitizer.node(schema, "", 0)
}

impl Sanitizer<'_> {
    fn loss(&mut self, pointer: &str, kind: LossKind, what: String) {
        let location = Location::Tool {
            name: self.tool.to_owned(),
            pointer: pointer.to_owned(),
        };
        self.losses.push(location, kind, what);
    }

    fn node(&mut self, node: &Value, pointer: &str, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(Error::invalid_input(format!(
                "input schema of tool {:?} nests deeper than {MAX_DEPTH} levels at {pointer:?} \
                 (a recursive $ref?); gemini needs a finite schema",
                self.tool
            )));
        }
        let Some(map) = node.as_object() else {
            self.loss(
                pointer,
                LossKind::Changed,
                format!("schema {node} replaced by {{}}"),
            );
            return Ok(json!({}));
        };
        if let Some(reference) = map.get("$ref") {
            return self.reference(reference, pointer, depth);
        }
        let mut out = Map::new();
        for (key, value) in map {
            let here = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
            match key.as_str() {
                "type" => self.type_keyword(value, &here, &mut out),
                "format" if value.as_str().is_some_and(|f| FORMATS.contains(&f)) => {
                    out.insert(key.clone(), value.clone());
                }
                "enum"
                    if value
                        .as_array()
                        .is_some_and(|v| v.iter().all(Value::is_string)) =>
                {
                    out.insert(key.clone(), value.clone());
                }
                "const" if value.is_string() => {
                    self.loss(
                        &here,
                        LossKind::Changed,
                        "const sent as a one-value enum".into(),
                    );
                    out.insert("enum".into(), json!([value]));
                }
                "exclusiveMinimum" | "exclusiveMaximum" if value.is_number() => {
                    let bound = if key == "exclusiveMinimum" {
                        "minimum"
                    } else {
                        "maximum"
                    };
                    self.loss(
                        &here,
                        LossKind::Changed,
                        format!("{key} sent as the inclusive {bound}"),
                    );
                    out.insert(bound.into(), value.clone());
                }
                "properties" => {
                    let Some(properties) = value.as_object() else {
                        self.loss(
                            &here,
                            LossKind::Dropped,
                            "properties that is not an object".into(),
                        );
                        continue;
                    };
                    let mut sanitized = Map::new();
                    for (name, property) in properties {
                        let at = format!("{here}/{}", name.replace('~', "~0").replace('/', "~1"));
                        sanitized.insert(name.clone(), self.node(property, &at, depth + 1)?);
                    }
                    out.insert(key.clone(), Value::Object(sanitized));
                }
                "items" if value.is_object() => {
                    out.insert(key.clone(), self.node(value, &here, depth + 1)?);
                }
                "anyOf" | "oneOf" if value.is_array() => {
                    if key == "oneOf" {
                        self.loss(&here, LossKind::Changed, "oneOf sent as anyOf".into());
                    }
                    let mut branches = Vec::new();
                    for (i, branch) in value.as_array().into_iter().flatten().enumerate() {
                        branches.push(self.node(branch, &format!("{here}/{i}"), depth + 1)?);
                    }
                    out.insert("anyOf".into(), Value::Array(branches));
                }
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                "$defs" | "definitions" if pointer.is_empty() => {}
                _ => self.loss(
                    &here,
                    LossKind::Dropped,
                    format!("keyword {key:?} is not accepted by gemini parameters"),
                ),
            }
        }
        Ok(Value::Object(out))
    }

    fn type_keyword(&mut self, value: &Value, here: &str, out: &mut Map<String, Value>) {
        let Some(types) = value.as_array() else {
            out.insert("type".into(), value.clone());
            return;
        };
        let non_null: Vec<&Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .collect();
        if non_null.len() < types.len() {
            out.insert("nullable".into(), json!(true));
        }
        match non_null.as_slice() {
            [single] => {
                out.insert("type".into(), (*single).clone());
            }
            [] => {}
            many => {
                let branches: Vec<Value> = many.iter().map(|t| json!({"type": t})).collect();
                out.insert("anyOf".into(), Value::Array(branches));
            }
        }
        self.loss(
            here,
            LossKind::Changed,
            format!("type {value} sent as a single type with nullable or anyOf"),
        );
    }

    fn reference(&mut self, reference: &Value, pointer: &str, depth: usize) -> Result<Value> {
        let target = reference.as_str().and_then(|r| {
            r.strip_prefix("#/$defs/")
                .or_else(|| r.strip_prefix("#/definitions/"))
        });
        let resolved = target.and_then(|name| self.defs.and_then(|defs| defs.get(name)));
        let Some(resolved) = resolved else {
            return Err(Error::invalid_input(format!(
                "input schema of tool {:?} has $ref {reference} at {pointer:?} that does not point \
                 into its own $defs; inline the definition",
                self.tool
            )));
        };
        self.loss(
            pointer,
            LossKind::Changed,
            format!("$ref {reference} inlined"),
        );
        self.node(resolved, pointer, depth + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_what_gemini_rejects_and_reports_it_by_pointer() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "mode": {"const": "fast"},
                "path": {"type": ["string", "null"], "format": "uri"},
                "n": {"type": "integer", "exclusiveMinimum": 0},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
            },
            "$defs": {"Tag": {"type": "string", "oneOf": [{"pattern": "^a"}, {"pattern": "^b"}]}},
        });
        let mut losses = Losses::default();
        let out = for_gemini(&schema, "t", &mut losses).unwrap();
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "mode": {"enum": ["fast"]},
                    "path": {"nullable": true, "type": "string"},
                    "n": {"type": "integer", "minimum": 0},
                    "tags": {"type": "array", "items": {"type": "string", "anyOf": [{"pattern": "^a"}, {"pattern": "^b"}]}},
                },
            })
        );
        let pointers: Vec<String> = losses
            .list
            .iter()
            .map(|l| match &l.location {
                Location::Tool { pointer, .. } => pointer.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(pointers.contains(&"/$schema".to_owned()));
        assert!(pointers.contains(&"/additionalProperties".to_owned()));
        assert!(pointers.contains(&"/properties/path/format".to_owned()));
        assert!(pointers.contains(&"/properties/tags/items".to_owned()));
    }

    #[test]
    fn recursive_and_remote_refs_are_errors() {
        let recursive = json!({"$ref": "#/$defs/A", "$defs": {"A": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}}});
        let err = for_gemini(&recursive, "t", &mut Losses::default()).unwrap_err();
        assert!(err.message().contains("deeper than"), "{err}");
        let remote = json!({"type": "object", "properties": {"a": {"$ref": "https://x/s.json"}}});
        let err = for_gemini(&remote, "t", &mut Losses::default()).unwrap_err();
        assert!(
            err.message().contains("does not point into its own $defs"),
            "{err}"
        );
    }
}
