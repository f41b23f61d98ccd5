SELECT id AS event_id, display_order AS position, fancy_id, name, event_url,
       image_url, country, city, description, year, start_date, end_date,
       expiry_date
FROM poap_events
