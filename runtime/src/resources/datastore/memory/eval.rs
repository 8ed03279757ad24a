//! The expression model evaluated directly, by DynamoDB's rules: what a
//! condition holds for, which sort keys a range takes, what an update
//! makes of an item.

use std::cmp::Ordering;

use crate::resources::datastore::condition::{Comparison, Condition, Path};
use crate::resources::datastore::key_condition::SortKey;
use crate::resources::datastore::update::{Action, Update};
use crate::resources::datastore::value::{Item, Value, add_numbers};
use crate::resources::error::{Fault, ResourceErrorKind};

/// The value at `path` in `item`.
pub(crate) fn resolve<'a>(item: &'a Item, path: &Path) -> Option<&'a Value> {
    let (first, rest) = path.segments.split_first()?;
    let mut value = item.get(first)?;
    for segment in rest {
        match value {
            Value::Map(map) => value = map.get(segment)?,
            _ => return None,
        }
    }
    Some(value)
}

/// Whether two values are equal as DynamoDB compares them: numbers by
/// value, sets whatever their order (a set has none), lists and maps
/// element by element, everything else as it is.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => a.compare(b) == Some(Ordering::Equal),
        (Value::StringSet(x), Value::StringSet(y)) => same_set(x, y, |p, q| p == q),
        (Value::BinarySet(x), Value::BinarySet(y)) => same_set(x, y, |p, q| p == q),
        (Value::NumberSet(x), Value::NumberSet(y)) => {
            same_set(x, y, |p, q| equal(&Value::Number(p.clone()), &Value::Number(q.clone())))
        }
        (Value::List(x), Value::List(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q)),
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len() && x.iter().all(|(name, p)| y.get(name).is_some_and(|q| equal(p, q)))
        }
        _ => a == b,
    }
}

/// Whether every member of each set is in the other.
fn same_set<T>(x: &[T], y: &[T], same: impl Fn(&T, &T) -> bool) -> bool {
    x.iter().all(|p| y.iter().any(|q| same(p, q))) && y.iter().all(|q| x.iter().any(|p| same(p, q)))
}

/// Whether `condition` holds for `item` (`None`: no item is there, which
/// has no attributes).
pub(crate) fn holds(condition: &Condition, item: Option<&Item>) -> bool {
    let at = |path: &Path| item.and_then(|item| resolve(item, path));
    match condition {
        Condition::Exists(path) => at(path).is_some(),
        Condition::NotExists(path) => at(path).is_none(),
        Condition::Compare(path, comparison, value) => match at(path) {
            None => *comparison == Comparison::Ne,
            Some(found) => compare(found, *comparison, value),
        },
        Condition::Between(path, low, high) => at(path).is_some_and(|found| {
            matches!(found.compare(low), Some(Ordering::Greater | Ordering::Equal))
                && matches!(found.compare(high), Some(Ordering::Less | Ordering::Equal))
        }),
        Condition::BeginsWith(path, prefix) => at(path).is_some_and(|found| begins_with(found, prefix)),
        Condition::Contains(path, value) => at(path).is_some_and(|found| contains(found, value)),
        Condition::And(a, b) => holds(a, item) && holds(b, item),
        Condition::Or(a, b) => holds(a, item) || holds(b, item),
        Condition::Not(inner) => !holds(inner, item),
    }
}

fn compare(found: &Value, comparison: Comparison, value: &Value) -> bool {
    match comparison {
        Comparison::Eq => equal(found, value),
        Comparison::Ne => !equal(found, value),
        Comparison::Lt => found.compare(value) == Some(Ordering::Less),
        Comparison::Le => matches!(found.compare(value), Some(Ordering::Less | Ordering::Equal)),
        Comparison::Gt => found.compare(value) == Some(Ordering::Greater),
        Comparison::Ge => matches!(found.compare(value), Some(Ordering::Greater | Ordering::Equal)),
    }
}

fn begins_with(found: &Value, prefix: &Value) -> bool {
    match (found, prefix) {
        (Value::String(text), Value::String(prefix)) => text.starts_with(prefix.as_str()),
        (Value::Binary(bytes), Value::Binary(prefix)) => bytes.starts_with(prefix),
        _ => false,
    }
}

fn contains(found: &Value, value: &Value) -> bool {
    match (found, value) {
        (Value::String(text), Value::String(part)) => text.contains(part.as_str()),
        (Value::StringSet(texts), Value::String(text)) => texts.contains(text),
        (Value::NumberSet(numbers), Value::Number(_)) => {
            numbers.iter().any(|number| equal(&Value::Number(number.clone()), value))
        }
        (Value::BinarySet(values), Value::Binary(bytes)) => values.contains(bytes),
        (Value::List(values), _) => values.iter().any(|element| equal(element, value)),
        _ => false,
    }
}

/// Whether a sort key `value` is in `range`.
pub(crate) fn in_range(range: &SortKey, value: &Value) -> bool {
    let order = |bound: &Value| value.compare(bound);
    match range {
        SortKey::Eq(bound) => order(bound) == Some(Ordering::Equal),
        SortKey::Lt(bound) => order(bound) == Some(Ordering::Less),
        SortKey::Le(bound) => matches!(order(bound), Some(Ordering::Less | Ordering::Equal)),
        SortKey::Gt(bound) => order(bound) == Some(Ordering::Greater),
        SortKey::Ge(bound) => matches!(order(bound), Some(Ordering::Greater | Ordering::Equal)),
        SortKey::Between(low, high) => {
            matches!(order(low), Some(Ordering::Greater | Ordering::Equal))
                && matches!(order(high), Some(Ordering::Less | Ordering::Equal))
        }
        SortKey::BeginsWith(prefix) => begins_with(value, prefix),
    }
}

fn refused(message: impl Into<String>) -> Fault {
    Fault::new(ResourceErrorKind::Refused, Some("ValidationException"), message)
}

/// The map `path` leads into (all but its last segment), and its last.
fn parent<'a>(item: &'a mut Item, path: &'a Path) -> Result<Option<(&'a mut Item, &'a str)>, Fault> {
    let Some((last, within)) = path.segments.split_last() else {
        return Ok(None);
    };
    let mut map = item;
    for segment in within {
        match map.get_mut(segment) {
            Some(Value::Map(inner)) => map = inner,
            _ => {
                return Err(refused(format!(
                    "the document path `{}` is not a map to update in",
                    path.segments.join(".")
                )));
            }
        }
    }
    Ok(Some((map, last.as_str())))
}

/// Applies `update` to `item`.
pub(crate) fn apply(update: &Update, item: &mut Item) -> Result<(), Fault> {
    for action in &update.actions {
        match action {
            Action::Set(path, value) => {
                if let Some((map, name)) = parent(item, path)? {
                    map.insert(name.to_string(), value.clone());
                }
            }
            Action::Remove(path) => {
                if let Ok(Some((map, name))) = parent(item, path) {
                    map.remove(name);
                }
            }
            Action::Increment(path, by) => {
                let Value::Number(by) = by else {
                    return Err(refused("an increment adds a number"));
                };
                let current = match resolve(item, path) {
                    None => "0".to_string(),
                    Some(Value::Number(number)) => number.clone(),
                    Some(_) => {
                        return Err(refused(format!("`{}` is not a number to increment", path.segments.join("."))));
                    }
                };
                let sum = add_numbers(&current, by).ok_or_else(|| refused("the increment overflows"))?;
                if let Some((map, name)) = parent(item, path)? {
                    map.insert(name.to_string(), Value::Number(sum));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::datastore::condition::attribute;

    fn item() -> Item {
        let mut item = Item::new();
        item.insert("status".into(), Value::from("open"));
        item.insert("count".into(), Value::from(3));
        item.insert("tags".into(), Value::StringSet(vec!["a".into(), "b".into()]));
        let mut address = Item::new();
        address.insert("city".into(), Value::from("Leeds"));
        item.insert("address".into(), Value::Map(address));
        item
    }

    #[test]
    fn conditions_hold_as_dynamodb_evaluates_them() {
        let item = item();
        let yes = |condition: Condition| assert!(holds(&condition, Some(&item)), "{condition:?}");
        let no = |condition: Condition| assert!(!holds(&condition, Some(&item)), "{condition:?}");
        yes(attribute("status").eq("open"));
        yes(attribute("count").eq(Value::number("3.0")));
        no(attribute("count").eq("3"));
        yes(attribute("missing").ne("x"));
        no(attribute("missing").lt(1));
        yes(attribute("count").between(1, 3));
        no(attribute("count").gt("1"));
        yes(attribute("status").begins_with("op"));
        yes(attribute("tags").contains("b"));
        yes(attribute("status").contains("pe"));
        yes(attribute("address").field("city").eq("Leeds"));
        yes(attribute("missing").not_exists().and(attribute("status").exists()));
        yes(attribute("missing").exists().or(!attribute("status").eq("closed")));
        assert!(holds(&attribute("pk").not_exists(), None));
        yes(attribute("tags").eq(Value::StringSet(vec!["b".into(), "a".into()])));
        no(attribute("tags").eq(Value::StringSet(vec!["a".into()])));
        let mut numbers = Item::new();
        numbers.insert("ns".into(), Value::NumberSet(vec!["1".into(), "2.50".into()]));
        numbers.insert("l".into(), Value::List(vec![Value::number("1.0")]));
        assert!(holds(&attribute("ns").eq(Value::NumberSet(vec!["2.5".into(), "1.0".into()])), Some(&numbers)));
        assert!(holds(&attribute("l").eq(Value::List(vec![Value::from(1)])), Some(&numbers)));
    }

    #[test]
    fn updates_set_remove_and_increment() {
        let mut item = item();
        let update = Update::new()
            .set("status", "closed")
            .remove("tags")
            .increment("count", 2)
            .increment("fresh", -1)
            .set_path(attribute("address").field("zip"), "LS1");
        apply(&update, &mut item).unwrap();
        assert_eq!(item["status"], Value::from("closed"));
        assert_eq!(item["count"], Value::from(5));
        assert_eq!(item["fresh"], Value::from(-1));
        assert!(!item.contains_key("tags"));
        assert!(resolve(&item, &attribute("address").field("zip")).is_some());
        let error = apply(&Update::new().increment("status", 1), &mut item).unwrap_err();
        assert_eq!(error.code.as_deref(), Some("ValidationException"));
        assert!(apply(&Update::new().set_path(attribute("nothing").field("x"), 1), &mut item).is_err());
    }

    #[test]
    fn sort_ranges_take_their_keys() {
        assert!(in_range(&SortKey::between(2, 4), &Value::from(4)));
        assert!(!in_range(&SortKey::lt(2), &Value::from(2)));
        assert!(in_range(&SortKey::le(2), &Value::from(2)));
        assert!(in_range(&SortKey::begins_with("2026-"), &Value::from("2026-03")));
        assert!(!in_range(&SortKey::gt("b"), &Value::from("a")));
    }
}
