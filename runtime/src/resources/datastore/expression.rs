//! The expression model compiled to DynamoDB's expression language: every
//! attribute name through `ExpressionAttributeNames` (`#n0`) and every
//! value through `ExpressionAttributeValues` (`:v0`), so that no name is
//! mistaken for a reserved word and no value is spliced into text.

use std::collections::HashMap;

use super::condition::{Comparison, Condition, Path};
use super::key_condition::SortKey;
use super::update::{Action, Update};
use super::value::Value;

/// The names and values of the expressions of one request.
#[derive(Debug, Default)]
pub(crate) struct Expressions {
    names: HashMap<String, String>,
    placeholders: HashMap<String, String>,
    values: Vec<(String, Value)>,
}

impl Expressions {
    pub(crate) fn new() -> Self {
        Expressions::default()
    }

    fn name(&mut self, name: &str) -> String {
        if let Some(placeholder) = self.placeholders.get(name) {
            return placeholder.clone();
        }
        let placeholder = format!("#n{}", self.placeholders.len());
        self.placeholders.insert(name.to_string(), placeholder.clone());
        self.names.insert(placeholder.clone(), name.to_string());
        placeholder
    }

    fn value(&mut self, value: &Value) -> String {
        let placeholder = format!(":v{}", self.values.len());
        self.values.push((placeholder.clone(), value.clone()));
        placeholder
    }

    fn path(&mut self, path: &Path) -> String {
        path.segments.iter().map(|segment| self.name(segment)).collect::<Vec<_>>().join(".")
    }

    /// `condition` as a condition (or filter) expression.
    pub(crate) fn condition(&mut self, condition: &Condition) -> String {
        match condition {
            Condition::Exists(path) => format!("attribute_exists({})", self.path(path)),
            Condition::NotExists(path) => format!("attribute_not_exists({})", self.path(path)),
            Condition::Compare(path, comparison, value) => {
                let operator = match comparison {
                    Comparison::Eq => "=",
                    Comparison::Ne => "<>",
                    Comparison::Lt => "<",
                    Comparison::Le => "<=",
                    Comparison::Gt => ">",
                    Comparison::Ge => ">=",
                };
                format!("{} {operator} {}", self.path(path), self.value(value))
            }
            Condition::Between(path, low, high) => {
                format!("{} BETWEEN {} AND {}", self.path(path), self.value(low), self.value(high))
            }
            Condition::BeginsWith(path, prefix) => format!("begins_with({}, {})", self.path(path), self.value(prefix)),
            Condition::Contains(path, value) => format!("contains({}, {})", self.path(path), self.value(value)),
            Condition::And(a, b) => format!("({} AND {})", self.condition(a), self.condition(b)),
            Condition::Or(a, b) => format!("({} OR {})", self.condition(a), self.condition(b)),
            Condition::Not(inner) => format!("(NOT {})", self.condition(inner)),
        }
    }

    /// A query's key condition: the partition, and the sort-key range.
    pub(crate) fn key_condition(&mut self, partition: (&str, &Value), sort: Option<(&str, &SortKey)>) -> String {
        let mut expression = format!("{} = {}", self.name(partition.0), self.value(partition.1));
        if let Some((name, range)) = sort {
            let name = self.name(name);
            let range = match range {
                SortKey::Eq(value) => format!("{name} = {}", self.value(value)),
                SortKey::Lt(value) => format!("{name} < {}", self.value(value)),
                SortKey::Le(value) => format!("{name} <= {}", self.value(value)),
                SortKey::Gt(value) => format!("{name} > {}", self.value(value)),
                SortKey::Ge(value) => format!("{name} >= {}", self.value(value)),
                SortKey::Between(low, high) => format!("{name} BETWEEN {} AND {}", self.value(low), self.value(high)),
                SortKey::BeginsWith(prefix) => format!("begins_with({name}, {})", self.value(prefix)),
            };
            expression = format!("{expression} AND {range}");
        }
        expression
    }

    /// `update` as an update expression.
    pub(crate) fn update(&mut self, update: &Update) -> String {
        let mut sets = Vec::new();
        let mut removes = Vec::new();
        for action in &update.actions {
            match action {
                Action::Set(path, value) => sets.push(format!("{} = {}", self.path(path), self.value(value))),
                Action::Remove(path) => removes.push(self.path(path)),
                Action::Increment(path, by) => {
                    let path = self.path(path);
                    let zero = self.value(&Value::from(0));
                    sets.push(format!("{path} = if_not_exists({path}, {zero}) + {}", self.value(by)));
                }
            }
        }
        let mut clauses = Vec::new();
        if !sets.is_empty() {
            clauses.push(format!("SET {}", sets.join(", ")));
        }
        if !removes.is_empty() {
            clauses.push(format!("REMOVE {}", removes.join(", ")));
        }
        clauses.join(" ")
    }

    /// The names, `None` where there are none (DynamoDB refuses an empty
    /// map).
    pub(crate) fn names(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }

    /// The values, each made by `convert`; `None` where there are none.
    pub(crate) fn values<T>(&self, convert: impl Fn(&Value) -> T) -> Option<HashMap<String, T>> {
        (!self.values.is_empty())
            .then(|| self.values.iter().map(|(placeholder, value)| (placeholder.clone(), convert(value))).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::datastore::condition::attribute;

    #[test]
    fn conditions_compile_with_names_and_values_apart() {
        let mut expressions = Expressions::new();
        let condition = attribute("status")
            .eq("open")
            .and(!attribute("deleted").exists())
            .or(attribute("count").between(1, 5).and(attribute("name").begins_with("a")))
            .or(attribute("tags").contains("x").and(attribute("address").field("status").ne("closed")));
        let compiled = expressions.condition(&condition);
        assert_eq!(
            compiled,
            "(((#n0 = :v0 AND (NOT attribute_exists(#n1))) OR (#n2 BETWEEN :v1 AND :v2 AND begins_with(#n3, :v3))) \
             OR (contains(#n4, :v4) AND #n5.#n0 <> :v5))"
        );
        let names = expressions.names().unwrap();
        assert_eq!(names["#n0"], "status");
        assert_eq!(names["#n5"], "address");
        let values = expressions.values(Clone::clone).unwrap();
        assert_eq!(values[":v1"], Value::from(1));
        assert_eq!(values[":v5"], Value::from("closed"));
    }

    #[test]
    fn key_conditions_and_updates_compile() {
        let mut expressions = Expressions::new();
        let key = expressions.key_condition(("pk", &Value::from("c-7")), Some(("sk", &SortKey::between("a", "m"))));
        assert_eq!(key, "#n0 = :v0 AND #n1 BETWEEN :v1 AND :v2");
        let mut expressions = Expressions::new();
        let key = expressions.key_condition(("pk", &Value::from("c-7")), Some(("sk", &SortKey::begins_with("o#"))));
        assert_eq!(key, "#n0 = :v0 AND begins_with(#n1, :v1)");
        for (range, operator) in [
            (SortKey::eq(1), "="),
            (SortKey::lt(1), "<"),
            (SortKey::le(1), "<="),
            (SortKey::gt(1), ">"),
            (SortKey::ge(1), ">="),
        ] {
            let mut expressions = Expressions::new();
            let key = expressions.key_condition(("pk", &Value::from("p")), Some(("sk", &range)));
            assert_eq!(key, format!("#n0 = :v0 AND #n1 {operator} :v1"));
        }
        let mut expressions = Expressions::new();
        let update = Update::new().set("status", "shipped").remove("draft").increment("count", 2).remove("note");
        assert_eq!(expressions.update(&update), "SET #n0 = :v0, #n2 = if_not_exists(#n2, :v1) + :v2 REMOVE #n1, #n3");
        assert_eq!(Expressions::new().names(), None);
    }
}
